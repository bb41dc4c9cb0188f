"""Gives every op its own segment instead of merging neighbours with the same is_capturable answer."""

from reference.mutants._base import export, fresh_reference

TAG = "piecewise"

ref = fresh_reference(__name__)


def __init__(self, ops, is_capturable, capture_sizes=None):
    self.segments = [(bool(is_capturable(i)), [op]) for i, op in enumerate(ops)]
    self.runners = [ref.GraphRunner(seg, capture_sizes) if capturable else None for capturable, seg in self.segments]


ref.PiecewiseGraphRunner.__init__ = __init__

export(ref, globals())
