"""step_mode warms up while step_count <= warmup_steps, so CAPTURE comes one step late."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


def step_mode(self):
    if not self._enabled or self._step_count <= self.warmup_steps:
        return ref.StepMode.WARMUP
    if self._step_count == self.warmup_steps + 1 and not self.capture_attempted:
        return ref.StepMode.CAPTURE
    return ref.StepMode.REPLAY


ref.InferenceGraphCapture.step_mode = step_mode

export(ref, globals())
