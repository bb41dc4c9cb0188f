"""disable() turns graphs off for the current step only; later steps use graphs again."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


_step_mode = ref.InferenceGraphCapture.step_mode


def disable(self):
    self.disabled_at = self._step_count


def step_mode(self):
    if getattr(self, "disabled_at", None) == self._step_count:
        return ref.StepMode.WARMUP
    return _step_mode(self)


ref.InferenceGraphCapture.disable = disable
ref.InferenceGraphCapture.step_mode = step_mode

export(ref, globals())
