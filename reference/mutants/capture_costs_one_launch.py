"""Counts a capture as a single launch, like a replay, instead of one launch per op."""

import numpy as np

from reference.mutants._base import export, fresh_reference

TAG = "shape-cache"

ref = fresh_reference(__name__)


def _capture(self, key, x):
    static_input = np.zeros(key, dtype=x.dtype)
    self._load(static_input, x)
    output = static_input
    for op in self.ops:
        output = op(output)
    ref.LaunchCounter.bump(1)
    self.graphs[key] = ref.GraphEntry(key, static_input, output, len(self.ops))
    return self._real_rows(output, x)


ref.GraphRunner._capture = _capture

export(ref, globals())
