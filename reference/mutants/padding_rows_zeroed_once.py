"""Zeroes the padded rows only when the buffer is made, so a smaller batch after a larger one leaves stale rows behind."""

import numpy as np

from reference.mutants._base import export, fresh_reference

TAG = "padding"

ref = fresh_reference(__name__)


def _load(static_input, x):
    if static_input.shape == x.shape:
        np.copyto(static_input, x)
        return
    np.copyto(static_input[: x.shape[0]], x)


ref.GraphRunner._load = staticmethod(_load)

export(ref, globals())
