"""A correct submission written from the contract alone (docs/contract.md), without reading the reference.

Its legitimate choices differ from the reference's: run_eager and the piecewise pass use
functools.reduce, warm-up is counted with a Counter, capture sizes stay unsorted and are
searched with bisect, fused ops are functools.partial objects, and StepMode's values are
ints. The grader must give it full marks (tests/test_correct_variants.py)."""

import bisect
import enum
import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Op = Callable[[np.ndarray], np.ndarray]
Shape = tuple[int, ...]


class LaunchCounter:
    n: int = 0

    @classmethod
    def reset(cls) -> None:
        cls.n = 0

    @classmethod
    def bump(cls, k: int = 1) -> None:
        cls.n = cls.n + k


def _apply_and_bump(acc, op):
    LaunchCounter.bump(1)
    return op(acc)


def run_eager(ops: Sequence[Op], x: np.ndarray) -> np.ndarray:
    return functools.reduce(_apply_and_bump, ops, x)


def _apply(ops, x):
    return functools.reduce(lambda acc, op: op(acc), ops, x)


@dataclass(eq=False)
class GraphEntry:
    shape: Shape
    static_input: np.ndarray
    output: np.ndarray
    num_ops: int


class GraphRunner:
    def __init__(self, ops: Sequence[Op], capture_sizes: Sequence[int] | None = None, warmup_steps: int = 0) -> None:
        self.ops = tuple(ops)
        self.capture_sizes = list(capture_sizes) if capture_sizes is not None else None  # unsorted
        self.warmup_steps = int(warmup_steps)
        self.graphs: dict = {}
        self._seen = Counter()

    @property
    def num_captured(self) -> int:
        return sum(1 for _ in self.graphs.values())

    def _pad_to(self, batch: int):
        sizes = sorted(self.capture_sizes)
        i = bisect.bisect_left(sizes, batch)
        return sizes[i] if i < len(sizes) else None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        real = None
        key = tuple(x.shape)
        if self.capture_sizes is not None:
            real = x.shape[0]
            padded = self._pad_to(real)
            if padded is None:
                return run_eager(self.ops, x)
            key = (padded, *x.shape[1:])
        entry = self.graphs.get(key)
        if entry is None and self._seen[key] < self.warmup_steps:
            self._seen[key] += 1
            return run_eager(self.ops, x)
        if entry is None:
            buf = np.empty(key, dtype=x.dtype)
            self._fill(buf, x, real)
            out = run_eager(self.ops, buf)
            entry = GraphEntry(shape=key, static_input=buf, output=np.array(out, copy=True), num_ops=len(self.ops))
            self.graphs[key] = entry
        else:
            self._fill(entry.static_input, x, real)
            out = _apply(self.ops, entry.static_input)
            LaunchCounter.bump(1)
            entry.output = np.array(out, copy=True)
        result = out if real is None else out[:real]
        return result

    @staticmethod
    def _fill(buf, x, real):
        if real is None:
            np.copyto(buf, x)
        else:
            np.copyto(buf[:real], x)
            buf[real:] = 0


class PiecewiseGraphRunner:
    def __init__(
        self, ops: Sequence[Op], is_capturable: Callable[[int], bool], capture_sizes: Sequence[int] | None = None
    ) -> None:
        flags = [bool(is_capturable(i)) for i in range(len(ops))]
        bounds = [i for i in range(1, len(ops)) if flags[i] != flags[i - 1]]
        starts = [0] + bounds
        ends = bounds + [len(ops)]
        self.segments = []
        if len(ops):
            for s, e in zip(starts, ends):
                seg = list(ops[s:e])
                if flags[s]:
                    self.segments.append(("graph", GraphRunner(seg, capture_sizes=capture_sizes)))
                else:
                    self.segments.append(("eager", seg))

    @property
    def num_graphs(self) -> int:
        return Counter(kind for kind, _ in self.segments)["graph"]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        def step(acc, seg):
            kind, body = seg
            return body(acc) if kind == "graph" else run_eager(body, acc)

        return functools.reduce(step, self.segments, x)


def fuse_elementwise(ops: Sequence[Op]) -> list[Op]:
    groups: list[list] = []
    for op in ops:
        ew = bool(getattr(op, "elementwise", False))
        if ew and groups and groups[-1][0] and True:
            groups[-1][1].append(op)
        else:
            groups.append([ew, [op]])
        if not ew:
            groups[-1][0] = False  # non-elementwise ops never join a run
    result: list[Op] = []
    for ew, members in groups:
        if ew and len(members) >= 2:
            fused = functools.partial(_apply, tuple(members))
            fused.elementwise = True
            result.append(fused)
        else:
            result.extend(members)
    return result


class StepMode(enum.Enum):
    WARMUP = 0
    CAPTURE = 1
    REPLAY = 2


class InferenceGraphCapture:
    def __init__(self, warmup_steps: int, enabled: bool = False) -> None:
        self.warmup = warmup_steps if warmup_steps >= 1 else 1
        self.graphs_enabled = enabled is True or bool(enabled)
        self._count = 0
        self.graph_id = None
        self.capture_attempted = False
        self.captured_batch_size = None
        self.captured_seq_step = None

    @property
    def step_count(self) -> int:
        return self._count

    @property
    def is_captured(self) -> bool:
        return self.graph_id is not None

    def step_mode(self) -> StepMode:
        if not self.graphs_enabled:
            return StepMode.WARMUP
        if self._count < self.warmup:
            return StepMode.WARMUP
        if self._count == self.warmup and not self.capture_attempted:
            return StepMode.CAPTURE
        return StepMode.REPLAY

    def advance(self) -> None:
        self._count += 1

    def record_capture(self, graph_id: int, batch_size: int, seq_step: int) -> None:
        self.graph_id = graph_id
        self.captured_batch_size = batch_size
        self.captured_seq_step = seq_step
        self.capture_attempted = True

    def check_static_shape(self, batch_size: int, seq_step: int) -> bool:
        if self.captured_batch_size is None or self.captured_seq_step is None:
            return False
        return self.captured_batch_size == batch_size and self.captured_seq_step == seq_step

    def disable(self) -> None:
        self.graphs_enabled = False
