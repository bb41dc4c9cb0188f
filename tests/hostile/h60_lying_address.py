"""Hostile: the fresh-buffer-on-replay bug (each replay copies the input into a new buffer
instead of the static one it captured), hidden by handing the first op an ndarray subclass
whose ``__array_interface__`` property reports the captured static buffer's address (issue 31,
"Why" 2). The op used to read the address through that attribute on any subclass: 100/100, no
flag (the bug unforged: 89.84).

Must get: no more than the same bug unforged (tests/test_forgeries.py): the op reads the address
through numpy.ndarray's own descriptor and computes on the plain array, so it records the fresh
buffer's real address."""
import numpy as np

import _honest_core
from _honest_core import *  # noqa: F401,F403


class Lying(np.ndarray):
    """Reports the address in ``claimed`` instead of its own."""

    @property
    def __array_interface__(self):
        real = np.asarray(self).__array_interface__
        claimed = getattr(self, "claimed", None)
        if claimed is None:
            return real
        return {**real, "data": (claimed, real["data"][1])}


def _address(x):
    return x.__array_interface__["data"][0]


class GraphRunner(_honest_core.GraphRunner):
    def __call__(self, x):
        x = np.asarray(x)
        key = self._key(x)
        entry = self.graphs.get(key) if key is not None else None
        if entry is None:
            return super().__call__(x)
        self._fill(entry.static_input, x)  # kept current, so that the graph looks right...
        fresh = np.zeros_like(entry.static_input)  # ...but the bug: a new buffer on every replay
        self._fill(fresh, x)
        y = fresh.view(Lying)
        y.claimed = _address(entry.static_input)
        for op in self.ops:
            y = op(y)
        _honest_core.LaunchCounter.bump(1)
        y = np.asarray(y)
        entry.output = y
        return self._rows(y, x)


class PiecewiseGraphRunner(_honest_core.PiecewiseGraphRunner):
    def __init__(self, ops, is_capturable, capture_sizes=None):
        super().__init__(ops, is_capturable, capture_sizes)
        self.runners = [GraphRunner(seg, capture_sizes) if flag else None for flag, seg in self.segments]
