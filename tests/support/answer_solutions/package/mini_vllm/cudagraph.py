"""A solution laid out as the handout says (mini_vllm/cudagraph.py): a dataclass cache entry
compared by value, padding by a rounding helper, the lookup as try/except KeyError."""

import enum
import functools
from dataclasses import dataclass

import numpy as np

from .launches import LaunchCounter, run_eager


@dataclass
class GraphEntry:
    shape: tuple
    static_input: np.ndarray
    output: np.ndarray
    num_ops: int


class GraphRunner:
    def __init__(self, ops, capture_sizes=None, warmup_steps=0):
        self.ops = list(ops)
        self.capture_sizes = capture_sizes
        self.warmup_steps = warmup_steps
        self.graphs = {}
        self.warm = {}

    @property
    def num_captured(self):
        return len(self.graphs)

    def _round_up(self, n):
        fitting = [s for s in self.capture_sizes if s >= n]
        return min(fitting) if fitting else None

    def __call__(self, x):
        x = np.asarray(x)
        n = x.shape[0] if x.ndim else None
        key = x.shape
        if self.capture_sizes is not None and n is not None:
            padded = self._round_up(n)
            if padded is None:
                return run_eager(self.ops, x)
            key = (padded, *x.shape[1:])
        try:
            entry = self.graphs[key]
        except KeyError:
            return self._first(key, x, n)
        if n is None or n == key[0]:
            np.copyto(entry.static_input, x)
        else:
            np.copyto(entry.static_input[:n], x)
            entry.static_input[n:] = 0
        y = entry.static_input
        for op in self.ops:
            y = op(y)
        LaunchCounter.bump(1)
        entry.output = y
        return np.array(y[:n] if self.capture_sizes is not None and n is not None else y)

    def _first(self, key, x, n):
        calls = self.warm.get(key, 0)
        if calls < self.warmup_steps:
            self.warm[key] = calls + 1
            return run_eager(self.ops, x)
        static = np.zeros(key, dtype=x.dtype)
        if n is None:
            static[...] = x
        else:
            static[:n] = x
        entry = GraphEntry(key, static, run_eager(self.ops, static), len(self.ops))
        self.graphs[key] = entry
        out = entry.output
        return np.array(out[:n] if self.capture_sizes is not None and n is not None else out)


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
