"""check_static_shape compares only the batch size with the captured one, not seq_step."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (
    (
        "return self._captured_shape == (batch_size, seq_step)",
        "return self._captured_shape is not None and self._captured_shape[0] == batch_size",
    ),
)

run_edited_reference(globals(), EDITS)
