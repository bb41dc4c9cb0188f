"""Captures on every call: the graph table is written but never looked up, so nothing is replayed."""

import numpy as np

from reference.mutants._base import export, fresh_reference

TAG = "shape-cache"

ref = fresh_reference(__name__)


def __call__(self, x):
    x = np.asarray(x)
    key = self._graph_key(x)
    if key is None:
        return ref.run_eager(self.ops, x)
    if self._warming_up(key):
        return ref.run_eager(self.ops, x)
    return self._capture(key, x)


ref.GraphRunner.__call__ = __call__

export(ref, globals())
