"""A correct solution written apart from the reference (issue 33's answer tests): the cache is a
dict subclass, the replay copies by slice assignment, the lookup is ``shape in self.graphs``,
and the replay's launch and its output share one line."""

import enum
import functools
from dataclasses import dataclass

import numpy as np


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


class GraphCache(dict):
    """Captured graphs by shape; counts how often one is fetched."""

    def __init__(self):
        super().__init__()
        self.hits = 0

    def __getitem__(self, key):
        self.hits += 1
        return super().__getitem__(key)


class GraphRunner:
    def __init__(self, ops, capture_sizes=None, warmup_steps=0):
        self.ops = list(ops)
        self.capture_sizes = sorted(capture_sizes) if capture_sizes is not None else None
        self.warmup_steps = warmup_steps
        self.graphs = GraphCache()
        self.warm = {}

    @property
    def num_captured(self):
        return len(self.graphs)

    def __call__(self, x):
        x = np.asarray(x)
        rows = x.shape[0] if x.ndim else None
        shape = tuple(x.shape)
        if self.capture_sizes is not None and rows is not None:
            bigger = [s for s in self.capture_sizes if s >= rows]
            if not bigger:
                return run_eager(self.ops, x)
            shape = (bigger[0],) + shape[1:]
        if shape in self.graphs:
            entry = self.graphs[shape]
            buf = entry.static_input
            if rows is None or rows == len(buf):
                buf[...] = x
            else:
                buf[:rows] = x
                buf[rows:] = 0
            y = buf
            for op in self.ops:
                y = op(y)
            LaunchCounter.bump(); entry.output = y  # noqa: E702 - one line, two statements
            return self._real(y, rows)
        done = self.warm.get(shape, 0)
        if done < self.warmup_steps:
            self.warm[shape] = done + 1
            return run_eager(self.ops, x)
        buf = np.zeros(shape, dtype=x.dtype)
        if rows is None:
            buf[...] = x
        else:
            buf[:rows] = x
        out = run_eager(self.ops, buf)
        self.graphs[shape] = GraphEntry(shape, buf, out, len(self.ops))
        return self._real(out, rows)

    def _real(self, out, rows):
        if self.capture_sizes is None or rows is None:
            return np.array(out, copy=True)
        return np.array(out[:rows], copy=True)


class PiecewiseGraphRunner:
    def __init__(self, ops, is_capturable, capture_sizes=None):
        self.segments = []
        for i, op in enumerate(ops):
            c = bool(is_capturable(i))
            if self.segments and self.segments[-1][0] == c:
                self.segments[-1][1].append(op)
            else:
                self.segments.append((c, [op]))
        self.runners = [GraphRunner(s, capture_sizes) if c else None for c, s in self.segments]

    @property
    def num_graphs(self):
        return sum(1 for c, _ in self.segments if c)

    def __call__(self, x):
        for (c, s), r in zip(self.segments, self.runners):
            x = r(x) if c else run_eager(s, x)
        return x


def fuse_elementwise(ops):
    out = []
    for op in ops:
        if getattr(op, "elementwise", False) and out and getattr(out[-1], "elementwise", False):
            prev = out.pop()
            group = prev._group if hasattr(prev, "_group") else [prev]
            f = lambda x, g=group + [op]: functools.reduce(lambda a, o: o(a), g, x)  # noqa: E731
            f.elementwise, f._group = True, group + [op]
            out.append(f)
        else:
            out.append(op)
    return out


class StepMode(enum.Enum):
    WARMUP = "warmup"
    CAPTURE = "capture"
    REPLAY = "replay"


class InferenceGraphCapture:
    def __init__(self, warmup_steps, enabled=False):
        self.warmup_steps, self._on, self._n = max(warmup_steps, 1), enabled, 0
        self.graph_id, self.capture_attempted, self._shape = None, False, None

    step_count = property(lambda s: s._n)
    is_captured = property(lambda s: s.graph_id is not None)

    def step_mode(self):
        if not self._on or self._n < self.warmup_steps:
            return StepMode.WARMUP
        if self._n == self.warmup_steps and not self.capture_attempted:
            return StepMode.CAPTURE
        return StepMode.REPLAY

    def advance(self):
        self._n += 1

    def record_capture(self, graph_id, batch_size, seq_step):
        self.graph_id, self._shape, self.capture_attempted = graph_id, (batch_size, seq_step), True

    def check_static_shape(self, batch_size, seq_step):
        return self._shape == (batch_size, seq_step)

    def disable(self):
        self._on = False
