"""The runner of a solution that keeps it apart from cudagraph.py (which re-exports it).

Graphs are keyed by a frozen dataclass; the copy into the static buffer is a module-level
helper function; batches are padded up to the capture sizes."""

from dataclasses import dataclass

import numpy as np


class LaunchCounter:
    n = 0

    @classmethod
    def reset(cls):
        cls.n = 0

    @classmethod
    def bump(cls, k=1):
        cls.n = cls.n + k


def run_eager(ops, x):
    for op in ops:
        LaunchCounter.bump(1)
        x = op(x)
    return x


@dataclass(eq=False)
class GraphEntry:
    shape: tuple
    static_input: np.ndarray
    output: np.ndarray
    num_ops: int


@dataclass(frozen=True)
class ShapeKey:
    dims: tuple


def load_static(static, x):
    """Put x into the static buffer in place; rows past x's are zeroed."""
    if static.ndim == 0 or static.shape[0] == x.shape[0]:
        np.copyto(static, x)
    else:
        np.copyto(static[: x.shape[0]], x)
        static[x.shape[0] :] = 0


class GraphRunner:
    def __init__(self, ops, capture_sizes=None, warmup_steps=0):
        self.ops = list(ops)
        self.capture_sizes = None if capture_sizes is None else sorted(set(capture_sizes))
        self.warmup_steps = warmup_steps
        self.graphs = {}
        self.eager_runs = {}

    @property
    def num_captured(self):
        return len(self.graphs)

    def _bucket(self, x):
        if x.ndim == 0 or self.capture_sizes is None:
            return tuple(x.shape)
        for size in self.capture_sizes:
            if size >= x.shape[0]:
                return (size,) + tuple(x.shape[1:])
        return None

    def __call__(self, x):
        x = np.asarray(x)
        dims = self._bucket(x)
        if dims is None:
            return run_eager(self.ops, x)
        key = ShapeKey(dims)
        if key not in self.graphs:
            runs = self.eager_runs.get(key, 0)
            if runs < self.warmup_steps:
                self.eager_runs[key] = runs + 1
                return run_eager(self.ops, x)
            static = np.zeros(dims, dtype=x.dtype)
            load_static(static, x)
            self.graphs[key] = GraphEntry(dims, static, run_eager(self.ops, static), len(self.ops))
            return self._rows(self.graphs[key].output, x)
        graph = self.graphs[key]
        load_static(graph.static_input, x)
        out = graph.static_input
        for op in self.ops:
            out = op(out)
        LaunchCounter.bump(1)
        graph.output = out
        return self._rows(out, x)

    def _rows(self, out, x):
        if x.ndim == 0 or self.capture_sizes is None:
            return out.copy()
        return out[: x.shape[0]].copy()
