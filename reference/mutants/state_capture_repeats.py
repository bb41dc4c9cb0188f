"""step_mode says CAPTURE at the threshold step even after a capture was recorded (ignores capture_attempted)."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


def step_mode(self):
    if not self._enabled or self._step_count < self.warmup_steps:
        return ref.StepMode.WARMUP
    if self._step_count == self.warmup_steps:
        return ref.StepMode.CAPTURE
    return ref.StepMode.REPLAY


ref.InferenceGraphCapture.step_mode = step_mode

export(ref, globals())
