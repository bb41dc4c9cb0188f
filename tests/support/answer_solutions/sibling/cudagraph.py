"""A solution whose runner lives in a sibling module (graph_runner.py); this file re-exports it
and holds the rest of the contract."""

import enum
import functools

from graph_runner import GraphEntry, GraphRunner, LaunchCounter, run_eager

__all__ = ["GraphEntry", "GraphRunner", "LaunchCounter", "run_eager"]


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
