"""step_mode says CAPTURE on every step from the threshold on until a capture is recorded."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "step-mode"

EDITS = (
    (
        "self._step_count == self.warmup_steps and not self.capture_attempted:",
        "self._step_count >= self.warmup_steps and not self.capture_attempted:  # should be ==",
    ),
)

run_edited_reference(globals(), EDITS)
