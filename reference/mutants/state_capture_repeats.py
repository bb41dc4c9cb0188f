"""step_mode says CAPTURE at the threshold step even after a capture was recorded (ignores capture_attempted)."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (
    (
        "if self._step_count == self.warmup_steps and not self.capture_attempted:",
        "if self._step_count == self.warmup_steps:  # ignores capture_attempted",
    ),
)

run_edited_reference(globals(), EDITS)
