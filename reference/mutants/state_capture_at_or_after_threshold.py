"""step_mode says CAPTURE whenever step_count >= warmup_steps and no capture was attempted (>= instead of ==)."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


def step_mode(self):
    if not self._enabled or self._step_count < self.warmup_steps:
        return ref.StepMode.WARMUP
    if not self.capture_attempted:
        return ref.StepMode.CAPTURE
    return ref.StepMode.REPLAY


ref.InferenceGraphCapture.step_mode = step_mode

export(ref, globals())
