"""step_mode ignores whether graphs are enabled, so a disabled machine still captures and replays."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


def step_mode(self):
    if self._step_count < self.warmup_steps:
        return ref.StepMode.WARMUP
    if self._step_count == self.warmup_steps and not self.capture_attempted:
        return ref.StepMode.CAPTURE
    return ref.StepMode.REPLAY


ref.InferenceGraphCapture.step_mode = step_mode

export(ref, globals())
