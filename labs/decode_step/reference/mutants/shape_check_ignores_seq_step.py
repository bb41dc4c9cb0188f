"""check_static_shape compares the batch size only."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "static-shape"

EDITS = (
    (
        "        return self._captured_shape == (batch_size, seq_step)\n",
        "        return self._captured_shape is not None and self._captured_shape[0] == batch_size  # seq_step too\n",
    ),
)

run_edited_reference(globals(), EDITS)
