"""step_mode says CAPTURE at the threshold even after a capture was attempted."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "step-mode"

EDITS = (
    (
        "self._step_count == self.warmup_steps and not self.capture_attempted:",
        "self._step_count == self.warmup_steps:  # ignores capture_attempted",
    ),
)

run_edited_reference(globals(), EDITS)
