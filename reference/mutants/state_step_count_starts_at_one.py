"""step_count counts the step in progress, not the finished ones, so it reads 1 before any advance()."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


def step_count(self):
    return self._step_count + 1


ref.InferenceGraphCapture.step_count = property(step_count)

export(ref, globals())
