"""Calls the uncapturable ops directly instead of through run_eager, so they cost no launches."""

from reference.mutants._base import export, fresh_reference

TAG = "piecewise"

ref = fresh_reference(__name__)


def __call__(self, x):
    for (_, seg_ops), runner in zip(self.segments, self.runners):
        if runner is None:
            for op in seg_ops:
                x = op(x)
        else:
            x = runner(x)
    return x


ref.PiecewiseGraphRunner.__call__ = __call__

export(ref, globals())
