"""check_static_shape says yes before any capture was recorded."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (
    (
        "return self._captured_shape == (batch_size, seq_step)",
        "return self._captured_shape is None or self._captured_shape == (batch_size, seq_step)",
    ),
)

run_edited_reference(globals(), EDITS)
