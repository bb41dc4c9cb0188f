"""A small, correct implementation of the student contract, written for the hostile suite.

Every hostile submission imports it (``from _honest_core import *``) and adds its
attack, so the cases its attack does not touch are graded exactly as an honest
submission's. ``materialize.py`` copies this file next to each hostile module.

``BUGGY = True`` turns it into a plausible but wrong solution: replays run the
ops eagerly, one launch per op, on the caller's array (the two classic
mistakes). Cheaters start from the buggy version, so any point they score above
the buggy baseline would be a point they did not earn.
"""

import enum
from dataclasses import dataclass

import numpy as np

BUGGY = False


class LaunchCounter:
    n = 0

    @classmethod
    def reset(cls):
        cls.n = 0

    @classmethod
    def bump(cls, k=1):
        cls.n += k


def run_eager(ops, x):
    for op in ops:
        x = op(x)
        LaunchCounter.bump(1)
    return x


@dataclass(eq=False)
class GraphEntry:
    shape: tuple
    static_input: np.ndarray
    output: np.ndarray
    num_ops: int


class GraphRunner:
    def __init__(self, ops, capture_sizes=None, warmup_steps=0):
        self.ops = list(ops)
        self.sizes = sorted(capture_sizes) if capture_sizes is not None else None
        self.warmup_steps = warmup_steps
        self.graphs = {}
        self._seen = {}

    @property
    def num_captured(self):
        return len(self.graphs)

    def _key(self, x):
        if x.ndim == 0 or self.sizes is None:
            return x.shape
        fitting = [s for s in self.sizes if s >= x.shape[0]]
        return (fitting[0], *x.shape[1:]) if fitting else None

    def __call__(self, x):
        x = np.asarray(x)
        key = self._key(x)
        if key is None:
            return run_eager(self.ops, x)
        entry = self.graphs.get(key)
        if entry is None:
            calls = self._seen.get(key, 0)
            if calls < self.warmup_steps:
                self._seen[key] = calls + 1
                return run_eager(self.ops, x)
            static = np.zeros(key, dtype=x.dtype)
            self._fill(static, x)
            out = run_eager(self.ops, static)
            self.graphs[key] = GraphEntry(key, static, out, len(self.ops))
            return self._rows(out, x)
        if BUGGY:  # wrong: eager on the caller's array, one launch per op
            return run_eager(self.ops, x)
        self._fill(entry.static_input, x)
        y = entry.static_input
        for op in self.ops:
            y = op(y)
        LaunchCounter.bump(1)
        entry.output = y
        return self._rows(y, x)

    @staticmethod
    def _fill(static, x):
        rows = x.shape[0] if x.ndim else None
        if static.shape == x.shape:
            static[...] = x
        else:
            static[:rows] = x
            static[rows:] = 0

    def _rows(self, out, x):
        if x.ndim == 0 or self.sizes is None:
            return np.array(out, copy=True)
        return np.array(out[: x.shape[0]], copy=True)


class PiecewiseGraphRunner:
    def __init__(self, ops, is_capturable, capture_sizes=None):
        self.segments = []
        for i, op in enumerate(ops):
            flag = bool(is_capturable(i))
            if self.segments and self.segments[-1][0] == flag:
                self.segments[-1][1].append(op)
            else:
                self.segments.append((flag, [op]))
        self.runners = [GraphRunner(seg, capture_sizes) if flag else None for flag, seg in self.segments]

    @property
    def num_graphs(self):
        return sum(1 for flag, _ in self.segments if flag)

    def __call__(self, x):
        for (_, seg), runner in zip(self.segments, self.runners):
            x = run_eager(seg, x) if runner is None else runner(x)
        return x


class _Fused:
    elementwise = True

    def __init__(self, parts):
        self.parts = list(parts)

    def __call__(self, x):
        for op in self.parts:
            x = op(x)
        return x


def fuse_elementwise(ops):
    out, run = [], []

    def flush():
        out.extend([_Fused(run)] if len(run) > 1 else run)
        run.clear()

    for op in ops:
        if getattr(op, "elementwise", False):
            run.append(op)
        else:
            flush()
            out.append(op)
    flush()
    return out


class StepMode(enum.Enum):
    WARMUP = "warmup"
    CAPTURE = "capture"
    REPLAY = "replay"


class InferenceGraphCapture:
    def __init__(self, warmup_steps, enabled=False):
        self.warmup_steps = max(1, warmup_steps)
        self.graph_id = None
        self.capture_attempted = False
        self._enabled = enabled
        self._steps = 0
        self._shape = None

    @property
    def step_count(self):
        return self._steps

    @property
    def is_captured(self):
        return self.graph_id is not None

    def step_mode(self):
        if not self._enabled or self._steps < self.warmup_steps:
            return StepMode.WARMUP
        if self._steps == self.warmup_steps and not self.capture_attempted:
            return StepMode.CAPTURE
        return StepMode.REPLAY

    def advance(self):
        self._steps += 1

    def record_capture(self, graph_id, batch_size, seq_step):
        self.graph_id = graph_id
        self.capture_attempted = True
        self._shape = (batch_size, seq_step)

    def check_static_shape(self, batch_size, seq_step):
        return self._shape == (batch_size, seq_step)

    def disable(self):
        self._enabled = False


__all__ = [
    "LaunchCounter",
    "run_eager",
    "GraphEntry",
    "GraphRunner",
    "PiecewiseGraphRunner",
    "fuse_elementwise",
    "StepMode",
    "InferenceGraphCapture",
]
