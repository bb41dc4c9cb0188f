"""check_static_shape compares only seq_step with the captured one, not the batch size."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (
    (
        "return self._captured_shape == (batch_size, seq_step)",
        "return self._captured_shape is not None and self._captured_shape[1] == seq_step",
    ),
)

run_edited_reference(globals(), EDITS)
