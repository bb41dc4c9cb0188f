"""Hostile: the fresh-buffer-on-replay bug, hidden by patching the op's class through a name bound
to ``type`` (``kind = type; kind(op).__call__ = ...``, which no rule of the scan named) with a
wrapper that rewrites the call record to the captured buffer's address, and putting the class
back at the end of every replay, before the worker's tripwire compares the class after the case
(issue 31, "Why" 2: 100/100, no flag). The log is reached through a computed name.

Must get: no more than the same bug unforged, and flagged (tests/test_forgeries.py): every op call
checks its own class, so the patch is seen while it is in place and the case fails with
GraderObjectChanged; the computed getattr is flagged."""
import numpy as np

import _honest_core
from _honest_core import *  # noqa: F401,F403

kind = type
_LOG = "_wit" + "ness"
_STATIC = {}  # id(fresh replay buffer) -> the address of the buffer captured for its shape


def _address(x):
    return x.__array_interface__["data"][0]


def _forge(op):
    cls = kind(op)
    real_call = cls.__call__

    def forged_call(self, x):
        out = real_call(self, x)
        captured = _STATIC.pop(id(x), None)
        log = getattr(self, _LOG, None)
        if captured is not None and log is not None:
            record = list(log.calls[-1])
            record[2] = captured
            log.calls[-1] = tuple(record)
        return out

    cls.__call__ = forged_call
    return cls, real_call


class GraphRunner(_honest_core.GraphRunner):
    def __call__(self, x):
        x = np.asarray(x)
        key = self._key(x)
        entry = self.graphs.get(key) if key is not None else None
        if entry is None or not self.ops or kind(self.ops[0]).__name__ != "GraderOp":
            return super().__call__(x)
        cls, real_call = _forge(self.ops[0])
        try:
            self._fill(entry.static_input, x)
            fresh = np.zeros_like(entry.static_input)  # the bug: a new buffer on every replay
            self._fill(fresh, x)
            _STATIC[id(fresh)] = _address(entry.static_input)
            y = fresh
            for op in self.ops:
                y = op(y)
        finally:
            cls.__call__ = real_call  # put back before the case ends
        _honest_core.LaunchCounter.bump(1)
        entry.output = y
        return self._rows(y, x)


class PiecewiseGraphRunner(_honest_core.PiecewiseGraphRunner):
    def __init__(self, ops, is_capturable, capture_sizes=None):
        super().__init__(ops, is_capturable, capture_sizes)
        self.runners = [GraphRunner(seg, capture_sizes) if flag else None for flag, seg in self.segments]
