"""record_capture turns graphs back on, undoing an earlier disable()."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "disable"

EDITS = (
    (
        "        self._captured_shape = (batch_size, seq_step)\n\n    def check_static_shape",
        "        self._captured_shape = (batch_size, seq_step)\n        self._enabled = True  # a disabled machine must stay off\n\n    def check_static_shape",
    ),
)

run_edited_reference(globals(), EDITS)
