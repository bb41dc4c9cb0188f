"""LaunchCounter.reset() leaves the count as it was instead of setting it to 0."""

from reference.mutants._base import export, fresh_reference

TAG = "launch-counter"

ref = fresh_reference(__name__)


@classmethod
def reset(cls):
    pass  # forgot cls.n = 0


ref.LaunchCounter.reset = reset

export(ref, globals())
