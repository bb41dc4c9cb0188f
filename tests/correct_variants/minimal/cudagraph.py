"""A correct submission written from the contract alone (docs/contract.md), without reading the reference.

As short as it can be: padding with np.pad (so warm-up runs see the padded input), graphs
keyed by shape tuples, private state-machine attributes. The grader must give it full
marks (tests/test_correct_variants.py)."""

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
        LaunchCounter.bump()
        x = op(x)
    return x


@dataclass(eq=False)
class GraphEntry:
    shape: tuple
    static_input: np.ndarray
    output: np.ndarray
    num_ops: int


class GraphRunner:
    def __init__(self, ops, capture_sizes=None, warmup_steps=0):
        self.ops, self.sizes, self.w = list(ops), capture_sizes, warmup_steps
        self.graphs, self.seen = {}, {}

    @property
    def num_captured(self):
        return len(self.graphs)

    def __call__(self, x):
        n = len(x) if self.sizes is not None else None
        if n is not None:
            fits = [s for s in self.sizes if s >= n]
            if not fits:
                return run_eager(self.ops, x)
            x = np.pad(x, [(0, min(fits) - n)] + [(0, 0)] * (x.ndim - 1))
        e = self.graphs.get(x.shape)
        if e is None:
            self.seen[x.shape] = self.seen.get(x.shape, 0) + 1
            if self.seen[x.shape] <= self.w:
                out = run_eager(self.ops, x)
                return out[:n] if n is not None else out
            buf = x.copy()
            e = self.graphs[x.shape] = GraphEntry(x.shape, buf, run_eager(self.ops, buf), len(self.ops))
        else:
            np.copyto(e.static_input, x)
            e.output = self._replay(e)
        return np.array(e.output[:n] if n is not None else e.output)

    def _replay(self, e):
        x = e.static_input
        for op in self.ops:
            x = op(x)
        LaunchCounter.bump(1)
        return x


class PiecewiseGraphRunner:
    def __init__(self, ops, is_capturable, capture_sizes=None):
        self.segs = []
        for i, op in enumerate(ops):
            c = bool(is_capturable(i))
            if self.segs and self.segs[-1][0] == c:
                self.segs[-1][1].append(op)
            else:
                self.segs.append((c, [op]))
        self.segs = [(c, GraphRunner(s, capture_sizes) if c else s) for c, s in self.segs]

    @property
    def num_graphs(self):
        return sum(c for c, _ in self.segs)

    def __call__(self, x):
        for c, s in self.segs:
            x = s(x) if c else run_eager(s, x)
        return x


def fuse_elementwise(ops):
    out = []
    for op in ops:
        if getattr(op, "elementwise", False) and out and getattr(out[-1], "elementwise", False):
            prev = out.pop()
            group = prev._group if hasattr(prev, "_group") else [prev]
            f = lambda x, g=group + [op]: functools.reduce(lambda a, o: o(a), g, x)
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
        self._w, self._on, self._n = max(warmup_steps, 1), enabled, 0
        self.graph_id, self.capture_attempted, self._shape = None, False, None

    step_count = property(lambda s: s._n)
    is_captured = property(lambda s: s.graph_id is not None)

    def step_mode(self):
        if not self._on or self._n < self._w:
            return StepMode.WARMUP
        return StepMode.CAPTURE if self._n == self._w and not self.capture_attempted else StepMode.REPLAY

    def advance(self):
        self._n += 1

    def record_capture(self, graph_id, batch_size, seq_step):
        self.graph_id, self._shape, self.capture_attempted = graph_id, (batch_size, seq_step), True

    def check_static_shape(self, batch_size, seq_step):
        return self._shape == (batch_size, seq_step)

    def disable(self):
        self._on = False
