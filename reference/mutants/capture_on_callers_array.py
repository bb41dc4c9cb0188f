"""At capture, runs the ops on the caller's array rather than on the new static buffer."""

import numpy as np

from reference.mutants._base import export, fresh_reference

TAG = "static-buffer"

ref = fresh_reference(__name__)


def _capture(self, key, x):
    static_input = np.zeros(key, dtype=x.dtype)
    self._load(static_input, x)
    output = ref.run_eager(self.ops, x)  # should run on static_input
    self.graphs[key] = ref.GraphEntry(key, static_input, output, len(self.ops))
    return self._real_rows(output, x)


ref.GraphRunner._capture = _capture

export(ref, globals())
