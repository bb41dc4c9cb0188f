"""Returns the whole padded output instead of slicing the real rows back out."""

import numpy as np

from reference.mutants._base import export, fresh_reference

TAG = "padding"

ref = fresh_reference(__name__)


def _real_rows(self, output, x):
    return np.array(output, copy=True)


ref.GraphRunner._real_rows = _real_rows

export(ref, globals())
