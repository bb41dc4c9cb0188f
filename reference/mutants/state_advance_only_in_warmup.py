"""advance() counts warm-up steps only, so step_count stops at the threshold once graphs are on."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


def advance(self):
    if self.step_mode() is ref.StepMode.WARMUP:
        self._step_count += 1


ref.InferenceGraphCapture.advance = advance

export(ref, globals())
