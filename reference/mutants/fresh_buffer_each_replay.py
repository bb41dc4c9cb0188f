"""Copies each replay's input into a newly allocated buffer instead of the graph's own static buffer."""

import numpy as np

from reference.mutants._base import export, fresh_reference

TAG = "static-buffer"

ref = fresh_reference(__name__)


def _replay(self, entry, x):
    buffer = np.zeros(entry.shape, dtype=x.dtype)
    self._load(buffer, x)
    entry.static_input = buffer
    y = buffer
    for op in self.ops:
        y = op(y)
    ref.LaunchCounter.bump(1)
    entry.output = y
    return self._real_rows(y, x)


ref.GraphRunner._replay = _replay

export(ref, globals())
