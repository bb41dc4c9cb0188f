"""Counts warm-up per real input shape instead of per padded graph key."""

import numpy as np

from reference.mutants._base import export, fresh_reference

TAG = "warmup"

ref = fresh_reference(__name__)


def __call__(self, x):
    x = np.asarray(x)
    key = self._graph_key(x)
    if key is None:
        return ref.run_eager(self.ops, x)
    entry = self.graphs.get(key)
    if entry is not None:
        return self._replay(entry, x)
    if self._warming_up(x.shape):  # should be the padded key
        return ref.run_eager(self.ops, x)
    return self._capture(key, x)


ref.GraphRunner.__call__ = __call__

export(ref, globals())
