"""A correct submission written from the contract alone (docs/contract.md), without reading the reference.

Its legitimate choices differ from the reference's: a replay returns the graph's static
output buffer itself (aliased, as real engines do), graphs are keyed by strings such as
"8x2", GraphEntry is a plain class, piecewise segments are built on first use, and fused
ops are closures. The grader must give it full marks (tests/test_correct_variants.py)."""

import enum

import numpy as np


class LaunchCounter:
    n: int = 0

    @classmethod
    def reset(cls) -> None:
        cls.n = 0

    @classmethod
    def bump(cls, k: int = 1) -> None:
        cls.n += k


def run_eager(ops, x):
    for op in ops:
        x = op(x)
        LaunchCounter.bump(1)
    return x


class GraphEntry:
    """Plain class, not a dataclass."""

    def __init__(self, shape, static_input, output, num_ops):
        self.shape = shape
        self.static_input = static_input
        self.output = output
        self.num_ops = num_ops

    def __repr__(self):
        return f"GraphEntry(shape={self.shape}, num_ops={self.num_ops})"


def _key(shape):
    return "x".join(str(d) for d in shape)


class GraphRunner:
    def __init__(self, ops, capture_sizes=None, warmup_steps=0):
        self.ops = list(ops)
        self.capture_sizes = sorted(capture_sizes) if capture_sizes is not None else None
        self.warmup_steps = warmup_steps
        self.graphs = {}
        self._calls = {}

    @property
    def num_captured(self):
        return len(self.graphs)

    def _padded_batch(self, b):
        if self.capture_sizes is None:
            return b
        for s in self.capture_sizes:
            if s >= b:
                return s
        return None

    def _compute(self, buf):
        out = buf
        for op in self.ops:
            out = op(out)
        return out

    def __call__(self, x):
        x = np.asarray(x)
        if self.capture_sizes is not None and x.ndim >= 1:
            n = x.shape[0]
            pb = self._padded_batch(n)
            if pb is None:
                return run_eager(self.ops, x)
            shape = (pb,) + tuple(x.shape[1:])
        else:
            n = None
            shape = tuple(x.shape)
        key = _key(shape)
        entry = self.graphs.get(key)
        if entry is None:
            seen = self._calls.get(key, 0)
            if seen < self.warmup_steps:
                self._calls[key] = seen + 1
                return run_eager(self.ops, x)
            # capture
            static = np.zeros(shape, dtype=x.dtype)
            if n is None:
                np.copyto(static, x)
            else:
                static[:n] = x
            out = run_eager(self.ops, static)
            entry = GraphEntry(shape, static, out, len(self.ops))
            self.graphs[key] = entry
        else:
            static = entry.static_input
            if n is None:
                np.copyto(static, x)
            else:
                np.copyto(static[:n], x)
                static[n:] = 0
            out = self._compute(static)
            LaunchCounter.bump(1)
            # alias: keep the same static output buffer when possible
            eo = entry.output
            if (
                isinstance(eo, np.ndarray)
                and isinstance(out, np.ndarray)
                and eo.shape == out.shape
                and eo.dtype == out.dtype
                and eo is not static
                and not np.shares_memory(eo, static)
            ):
                np.copyto(eo, out)
            else:
                entry.output = out
        res = entry.output
        if n is not None:
            return res[:n]
        return res


class PiecewiseGraphRunner:
    def __init__(self, ops, is_capturable, capture_sizes=None):
        self._ops = list(ops)
        self._is_capturable = is_capturable
        self._capture_sizes = capture_sizes
        self._segments = None  # built lazily

    def _build(self):
        if self._segments is not None:
            return self._segments
        segs = []
        cur = []
        cur_flag = None
        for i, op in enumerate(self._ops):
            flag = bool(self._is_capturable(i))
            if cur and flag != cur_flag:
                segs.append((cur_flag, cur))
                cur = []
            cur_flag = flag
            cur.append(op)
        if cur:
            segs.append((cur_flag, cur))
        self._segments = [
            (flag, GraphRunner(seg, capture_sizes=self._capture_sizes) if flag else seg) for flag, seg in segs
        ]
        return self._segments

    @property
    def num_graphs(self):
        return sum(1 for flag, _ in self._build() if flag)

    def __call__(self, x):
        for flag, seg in self._build():
            x = seg(x) if flag else run_eager(seg, x)
        return x


def fuse_elementwise(ops):
    def make_fused(group):
        group = tuple(group)

        def fused(x):
            for op in group:
                x = op(x)
            return x

        fused.elementwise = True
        return fused

    out = []
    run = []

    def flush():
        if len(run) >= 2:
            out.append(make_fused(run))
        else:
            out.extend(run)
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
        self.enabled = bool(enabled)
        self._step = 0
        self.graph_id = None
        self.capture_attempted = False
        self._recorded = None

    @property
    def step_count(self):
        return self._step

    @property
    def is_captured(self):
        return self.graph_id is not None

    def step_mode(self):
        if not self.enabled or self._step < self.warmup_steps:
            return StepMode.WARMUP
        if self._step == self.warmup_steps and not self.capture_attempted:
            return StepMode.CAPTURE
        return StepMode.REPLAY

    def advance(self):
        self._step += 1

    def record_capture(self, graph_id, batch_size, seq_step):
        self.graph_id = graph_id
        self._recorded = (batch_size, seq_step)
        self.capture_attempted = True

    def check_static_shape(self, batch_size, seq_step):
        return self._recorded is not None and self._recorded == (batch_size, seq_step)

    def disable(self):
        self.enabled = False
