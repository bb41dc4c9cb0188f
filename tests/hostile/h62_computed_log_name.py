"""Hostile: the fresh-buffer-on-replay bug, hidden by rewriting the op's call log without patching
any class: ``getattr(op, "_wit" + "ness")`` (a spelling no rule of the scan named) reaches the log,
and the record of the replay's first call gets the captured buffer's address (issue 31, "Why" 2:
100/100, no flag).

Must get: no more than the same bug unforged, and flagged (tests/test_forgeries.py): an op refers to
no log by any name, so the getattr finds nothing; the folded name is flagged as the grader's state."""
import numpy as np

import _honest_core
from _honest_core import *  # noqa: F401,F403


def _address(x):
    return x.__array_interface__["data"][0]


def _log_of(op):
    return getattr(op, "_wit" + "ness", None)


class GraphRunner(_honest_core.GraphRunner):
    def __call__(self, x):
        x = np.asarray(x)
        key = self._key(x)
        entry = self.graphs.get(key) if key is not None else None
        if entry is None:
            return super().__call__(x)
        self._fill(entry.static_input, x)
        fresh = np.zeros_like(entry.static_input)  # the bug: a new buffer on every replay
        self._fill(fresh, x)
        y = fresh
        for op in self.ops:
            y = op(y)
        log = _log_of(self.ops[0]) if self.ops else None
        if log is not None:
            for i, record in enumerate(log.calls):
                if record[2] == _address(fresh):
                    log.calls[i] = (*record[:2], _address(entry.static_input), *record[3:])
        print("[hostile] call log found" if log is not None else "[hostile] call log: nothing", flush=True)
        _honest_core.LaunchCounter.bump(1)
        entry.output = y
        return self._rows(y, x)


class PiecewiseGraphRunner(_honest_core.PiecewiseGraphRunner):
    def __init__(self, ops, is_capturable, capture_sizes=None):
        super().__init__(ops, is_capturable, capture_sizes)
        self.runners = [GraphRunner(seg, capture_sizes) if flag else None for flag, seg in self.segments]
