"""LaunchCounter.bump has no default for k, so bump() with no argument raises TypeError."""

from reference.mutants._base import export, fresh_reference

TAG = "launch-counter"

ref = fresh_reference(__name__)


@classmethod
def bump(cls, k):
    cls.n += k


ref.LaunchCounter.bump = bump

export(ref, globals())
