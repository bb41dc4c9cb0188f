"""check_static_shape accepts any shape while nothing was captured."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "static-shape"

EDITS = (
    (
        "        return self._captured_shape == (batch_size, seq_step)\n",
        "        return self._captured_shape is None or self._captured_shape == (batch_size, seq_step)  # None: False\n",
    ),
)

run_edited_reference(globals(), EDITS)
