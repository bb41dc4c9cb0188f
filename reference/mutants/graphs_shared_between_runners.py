"""Keeps the graph table in a class attribute, so every GraphRunner shares (and replays) the others' graphs."""

from reference.mutants._base import export, fresh_reference

TAG = "shape-cache"

ref = fresh_reference(__name__)


ref.GraphRunner.shared_graphs = {}
_init = ref.GraphRunner.__init__


def __init__(self, ops, capture_sizes=None, warmup_steps=0):
    _init(self, ops, capture_sizes, warmup_steps)
    self.graphs = ref.GraphRunner.shared_graphs  # one dict for all runners


ref.GraphRunner.__init__ = __init__

export(ref, globals())
