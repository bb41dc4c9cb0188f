"""A fused group composes its ops the wrong way round, applying the last op first."""

from reference.mutants._base import export, fresh_reference

TAG = "fusion"

ref = fresh_reference(__name__)


class _Reversed(ref._FusedElementwise):
    def __call__(self, x):
        for op in reversed(self.parts):
            x = op(x)
        return x


ref._FusedElementwise = _Reversed

export(ref, globals())
