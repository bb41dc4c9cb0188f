"""CUDA graphs on the CPU: graphs keyed on (shape, dtype), replays return the static output buffer.

A correct solution written apart from the reference, with padding done by a helper imported
from the submission's own directory (_helpers.py). tests/test_grade_engine.py grades it as is,
cut at the stretch-goals line (a core-only submission), and with faults injected.
"""

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from _helpers import bucket_for, pad_rows


class LaunchCounter:
    n = 0

    @classmethod
    def reset(cls):
        cls.n = 0

    @classmethod
    def bump(cls, k=1):
        cls.n = cls.n + k


def run_eager(ops, x):
    y = x
    for op in list(ops):
        LaunchCounter.bump()
        y = op(y)
    return y


@dataclass(eq=False)
class GraphEntry:
    shape: tuple
    static_input: Any
    output: Any
    num_ops: int
    static_output: Any = field(default=None, repr=False)


class GraphRunner:
    def __init__(self, ops, capture_sizes=None, warmup_steps=0):
        self._ops = tuple(ops)
        self._sizes = sorted(set(capture_sizes)) if capture_sizes else None
        self._warmup = int(warmup_steps)
        self._seen = {}
        self.graphs = {}

    @property
    def num_captured(self):
        return len(self.graphs)

    def _key(self, x):
        if x.ndim == 0 or self._sizes is None:
            return (tuple(x.shape), x.dtype.str)
        rows = bucket_for(self._sizes, x.shape[0])
        if rows is None:
            return None
        return ((rows,) + tuple(x.shape[1:]), x.dtype.str)

    def _fill(self, buf, x):
        if buf.shape == x.shape:
            buf[...] = x
        else:
            pad_rows(buf, x)

    def _compute(self, entry):
        y = entry.static_input
        for op in self._ops:
            y = op(y)
        y = np.asarray(y)
        out = entry.static_output
        if out is None or out.shape != y.shape or out.dtype != y.dtype:
            out = entry.static_output = np.empty_like(y)
        out[...] = y
        entry.output = out
        return out

    def _view(self, out, x):
        if self._sizes is None or x.ndim == 0:
            return out
        return out[: x.shape[0]]

    def __call__(self, x):
        x = np.asarray(x)
        key = self._key(x)
        if key is None:
            return run_eager(self._ops, x)
        entry = self.graphs.get(key)
        if entry is None:
            count = self._seen.get(key, 0)
            if count < self._warmup:
                self._seen[key] = count + 1
                return run_eager(self._ops, x)
            shape, dtype = key
            entry = GraphEntry(shape, np.zeros(shape, dtype=dtype), None, len(self._ops))
            self._fill(entry.static_input, x)
            LaunchCounter.bump(len(self._ops))
            self.graphs[key] = entry
            return self._view(self._compute(entry), x)
        self._fill(entry.static_input, x)
        LaunchCounter.bump()
        return self._view(self._compute(entry), x)


class PiecewiseGraphRunner:
    def __init__(self, ops, is_capturable, capture_sizes=None):
        ops = list(ops)
        self._pieces = []
        start = 0
        while start < len(ops):
            flag = bool(is_capturable(start))
            end = start + 1
            while end < len(ops) and bool(is_capturable(end)) == flag:
                end += 1
            chunk = ops[start:end]
            self._pieces.append(GraphRunner(chunk, capture_sizes) if flag else chunk)
            start = end

    @property
    def num_graphs(self):
        return sum(isinstance(p, GraphRunner) for p in self._pieces)

    def __call__(self, x):
        for piece in self._pieces:
            x = piece(x) if isinstance(piece, GraphRunner) else run_eager(piece, x)
        return x


# ---------------------------------------------------------------- stretch goals
def _chain(parts):
    def fused(x):
        for p in parts:
            x = p(x)
        return x

    fused.elementwise = True
    fused.parts = parts
    return fused


def fuse_elementwise(ops):
    out, pending = [], []
    for op in list(ops) + [None]:
        if op is not None and getattr(op, "elementwise", False):
            pending.append(op)
            continue
        if len(pending) > 1:
            out.append(_chain(tuple(pending)))
        else:
            out.extend(pending)
        pending = []
        if op is not None:
            out.append(op)
    return out


class StepMode(enum.Enum):
    WARMUP = enum.auto()
    CAPTURE = enum.auto()
    REPLAY = enum.auto()


class InferenceGraphCapture:
    def __init__(self, warmup_steps, enabled=False):
        self.warmup_steps = warmup_steps if warmup_steps >= 1 else 1
        self._on = bool(enabled)
        self._steps = 0
        self._shape = None
        self.graph_id = None
        self.capture_attempted = False

    @property
    def step_count(self):
        return self._steps

    @property
    def is_captured(self):
        return self._shape is not None

    def step_mode(self):
        if not self._on or self._steps < self.warmup_steps:
            return StepMode.WARMUP
        if self._steps == self.warmup_steps and not self.capture_attempted:
            return StepMode.CAPTURE
        return StepMode.REPLAY

    def advance(self):
        self._steps += 1

    def record_capture(self, graph_id, batch_size, seq_step):
        self.graph_id = graph_id
        self._shape = (batch_size, seq_step)
        self.capture_attempted = True

    def check_static_shape(self, batch_size, seq_step):
        return self._shape is not None and self._shape == (batch_size, seq_step)

    def disable(self):
        self._on = False
