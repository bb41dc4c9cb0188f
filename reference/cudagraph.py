"""CUDA graphs, simulated on the CPU with numpy and a launch counter.

Every GPU kernel costs the CPU a launch. An LLM decode step runs hundreds of
small kernels, so the CPU can become the bottleneck. A CUDA graph records the
kernel sequence once and replays it later with a single launch. Inference
engines (vLLM, SGLang, nano-vllm, TensorRT-LLM) do this for the decode step.

Nothing here is timed. We count launches instead: eager execution pays one
launch per op on every call, and a graph replay pays one launch in total.

The pieces, and the real-engine rule each one models:

- ``LaunchCounter``: the CPU cost of launching kernels.
- ``run_eager``: the baseline, one launch per op on every call.
- ``GraphRunner``: capture once, replay forever.
  Constraint 1: a graph is frozen to the shapes it was captured with, so
  graphs are keyed by shape. Constraint 2: a graph reads fixed memory
  addresses, so new inputs must be copied into the static input buffer.
  The win: a replay costs one launch, however many ops it holds.
  Padding: as vLLM does, graphs exist only for a few batch sizes; a batch is
  padded up to the nearest one, and batches above the largest run eagerly.
  Warm-up: each shape runs eagerly a few times before it is captured.
- ``PiecewiseGraphRunner``: vLLM's piecewise mode, where the ops around
  attention are captured and attention itself runs eagerly.
- ``fuse_elementwise``: the torch.compile half of the story, which merges
  adjacent elementwise ops so that fewer kernels are launched at all.
- ``StepMode`` and ``InferenceGraphCapture``: the decode-loop state machine an
  inference engine uses to decide, step by step, whether to warm up, capture
  or replay.
"""

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Op = Callable[[np.ndarray], np.ndarray]
Shape = tuple[int, ...]


class LaunchCounter:
    """Global tally of kernel launches, standing in for CPU launch overhead.

    ``n`` lives on the class, so every runner in the process adds to the same
    count, just as every kernel launch costs the same CPU.
    """

    n: int = 0

    @classmethod
    def reset(cls) -> None:
        cls.n = 0

    @classmethod
    def bump(cls, k: int = 1) -> None:
        cls.n += k


def run_eager(ops: Sequence[Op], x: np.ndarray) -> np.ndarray:
    """Apply ``ops`` in order and pay one launch per op: PyTorch eager mode."""
    for op in ops:
        x = op(x)
        LaunchCounter.bump(1)
    return x


@dataclass(eq=False)
class GraphEntry:
    """One captured graph.

    ``shape`` is the shape it was captured for, ``static_input`` the buffer
    every replay reads from, ``output`` the result of the latest run, and
    ``num_ops`` how many kernels the graph holds.
    """

    shape: Shape
    static_input: np.ndarray
    output: np.ndarray
    num_ops: int


class GraphRunner:
    """Captures ``ops`` once per input shape and replays the graph afterwards.

    Models the CUDA-graph runner of vLLM and nano-vllm (``torch.cuda.graph``):

    - Constraint 1: graphs are keyed by shape (``graphs`` maps a shape to its
      ``GraphEntry``). A shape never seen before is captured.
    - Constraint 2: a replay copies the new input into the entry's
      ``static_input`` in place, because the graph only ever reads that buffer.
    - The win: a replay costs one launch instead of one per op.
    - ``capture_sizes`` (vLLM's cudagraph capture sizes): the batch axis
      (axis 0) is rounded up to the smallest capture size that holds it, and
      that padded shape is the key. Padded rows are zero-filled on every call,
      so stale rows never leak, and only the real rows are returned. A batch
      above the largest capture size runs eagerly and is never captured. The
      ops must keep the batch axis, as real model layers do. A 0-d input has
      no batch axis and is keyed by its shape, unpadded.
    - ``warmup_steps``: the first ``warmup_steps`` calls of each key run
      eagerly (engines warm up kernels and allocators before capturing);
      the next call captures. 0 (the default) or any value below it means no
      warm-up: the first call of a key captures.

    Every call through a graph returns a fresh array. A real engine instead
    returns a view of its static output buffer, which the next replay
    overwrites.
    """

    def __init__(
        self,
        ops: Sequence[Op],
        capture_sizes: Sequence[int] | None = None,
        warmup_steps: int = 0,
    ) -> None:
        self.ops = list(ops)
        self.capture_sizes = None if capture_sizes is None else tuple(sorted(capture_sizes))
        self.warmup_steps = warmup_steps
        self.graphs: dict[Shape, GraphEntry] = {}
        self._eager_calls: dict[Shape, int] = {}

    @property
    def num_captured(self) -> int:
        return len(self.graphs)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        key = self._graph_key(x)
        if key is None:  # above the largest capture size: eager, never captured
            return run_eager(self.ops, x)
        entry = self.graphs.get(key)  # Constraint 1: one graph per shape
        if entry is not None:
            return self._replay(entry, x)
        if self._warming_up(key):
            return run_eager(self.ops, x)
        return self._capture(key, x)

    def _graph_key(self, x: np.ndarray) -> Shape | None:
        """The (padded) shape that selects a graph; None means run eagerly."""
        if x.ndim == 0:
            return x.shape
        batch = self._padded_batch(x.shape[0])
        if batch is None:
            return None
        return (batch, *x.shape[1:])

    def _padded_batch(self, n: int) -> int | None:
        """Smallest capture size that holds ``n`` rows; None if none does."""
        if self.capture_sizes is None:
            return n
        for size in self.capture_sizes:
            if size >= n:
                return size
        return None

    def _warming_up(self, key: Shape) -> bool:
        """Count one eager call for ``key`` while it still has warm-up left."""
        done = self._eager_calls.get(key, 0)
        if done < self.warmup_steps:
            self._eager_calls[key] = done + 1
            return True
        return False

    def _capture(self, key: Shape, x: np.ndarray) -> np.ndarray:
        """Record the graph: run the ops once on a new static buffer."""
        static_input = np.zeros(key, dtype=x.dtype)
        self._load(static_input, x)
        output = run_eager(self.ops, static_input)
        self.graphs[key] = GraphEntry(key, static_input, output, len(self.ops))
        return self._real_rows(output, x)

    def _replay(self, entry: GraphEntry, x: np.ndarray) -> np.ndarray:
        """Constraint 2, then the win: refill the buffer, launch once."""
        self._load(entry.static_input, x)
        y = entry.static_input
        for op in self.ops:
            y = op(y)
        LaunchCounter.bump(1)
        entry.output = y
        return self._real_rows(y, x)

    @staticmethod
    def _load(static_input: np.ndarray, x: np.ndarray) -> None:
        """Copy ``x`` into the static buffer in place; zero the padded rows."""
        if static_input.shape == x.shape:
            np.copyto(static_input, x)
            return
        rows = x.shape[0]
        np.copyto(static_input[:rows], x)
        static_input[rows:] = 0

    def _real_rows(self, output: np.ndarray, x: np.ndarray) -> np.ndarray:
        """A fresh copy of the output rows that belong to real inputs."""
        if self.capture_sizes is None or x.ndim == 0:
            return np.array(output, copy=True)
        return np.array(output[: x.shape[0]], copy=True)


class PiecewiseGraphRunner:
    """Captures the capturable stretches of a model and runs the rest eagerly.

    Models vLLM's piecewise CUDA graphs: attention depends on per-request
    metadata that a graph cannot freeze, so the model is split at attention.
    Consecutive ops with the same ``is_capturable(i)`` form a segment; each
    capturable segment gets its own ``GraphRunner`` and the others run through
    ``run_eager``. A replay costs one launch per capturable segment plus one
    per eager op, so ``[capturable, attention, capturable]`` gives two graphs
    and three launches.

    ``segments`` lists ``(capturable, ops)`` pairs in model order, and
    ``runners`` holds the matching ``GraphRunner``, or None for eager ones.
    """

    def __init__(
        self,
        ops: Sequence[Op],
        is_capturable: Callable[[int], bool],
        capture_sizes: Sequence[int] | None = None,
    ) -> None:
        self.segments: list[tuple[bool, list[Op]]] = []
        for i, op in enumerate(ops):
            capturable = bool(is_capturable(i))
            if self.segments and self.segments[-1][0] == capturable:
                self.segments[-1][1].append(op)
            else:
                self.segments.append((capturable, [op]))
        self.runners: list[GraphRunner | None] = [
            GraphRunner(seg_ops, capture_sizes) if capturable else None
            for capturable, seg_ops in self.segments
        ]

    @property
    def num_graphs(self) -> int:
        return sum(capturable for capturable, _ in self.segments)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        for (_, seg_ops), runner in zip(self.segments, self.runners):
            x = run_eager(seg_ops, x) if runner is None else runner(x)
        return x


class _FusedElementwise:
    """Several elementwise ops run as one kernel, in their original order."""

    elementwise = True

    def __init__(self, parts: Sequence[Op]) -> None:
        self.parts = tuple(parts)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        for op in self.parts:
            x = op(x)
        return x

    def __repr__(self) -> str:
        return f"fused({', '.join(getattr(p, '__name__', repr(p)) for p in self.parts)})"


def fuse_elementwise(ops: Sequence[Op]) -> list[Op]:
    """Merge each maximal run of two or more adjacent elementwise ops into one op.

    This is what torch.compile's fusion does: ``+1`` then ``*2`` become one
    kernel, so even eager execution launches fewer kernels. An op counts as
    elementwise when it has ``elementwise = True``; the fused op is marked
    the same way. A lone elementwise op and every other op are kept as is.
    A run is merged whole: ``[+1, *2, relu, softmax]`` becomes
    ``[fused(+1, *2, relu), softmax]``, not two fused pairs.
    """
    fused: list[Op] = []
    run: list[Op] = []

    def close_run() -> None:
        if len(run) >= 2:
            fused.append(_FusedElementwise(run))
        else:
            fused.extend(run)
        run.clear()

    for op in ops:
        if getattr(op, "elementwise", False):
            run.append(op)
        else:
            close_run()
            fused.append(op)
    close_run()
    return fused


class StepMode(enum.Enum):
    """What the decode loop should do on the current step."""

    WARMUP = "warmup"
    CAPTURE = "capture"
    REPLAY = "replay"


class InferenceGraphCapture:
    """Decode-step state machine: warm up, capture once, then replay.

    The decode step of an inference engine has a static shape (a fixed batch,
    one new token per sequence), so the engine can capture it. The caller asks
    ``step_mode()`` before each step, does what it says, and calls
    ``advance()`` after:

    - ``WARMUP`` while disabled or ``step_count < warmup_steps``; run normally.
    - ``CAPTURE`` at ``step_count == warmup_steps`` if no capture was attempted
      yet; run under capture, then ``record_capture(...)``. On failure the
      caller sets ``capture_attempted = True`` without recording, or disables.
    - ``REPLAY`` otherwise; replay if ``is_captured`` and
      ``check_static_shape(...)`` agree, else fall back and ``disable()``.

    ``warmup_steps`` below 1 (0, -1, -5, ...) is raised to 1, so kernels
    always run once before capture. Graphs are off unless ``enabled=True``, and ``disable()`` turns
    them off for good.
    """

    def __init__(self, warmup_steps: int, enabled: bool = False) -> None:
        self.warmup_steps = max(1, warmup_steps)
        self.graph_id: int | None = None
        self.capture_attempted = False
        self._enabled = enabled
        self._step_count = 0
        self._captured_shape: tuple[int, int] | None = None

    @property
    def step_count(self) -> int:
        return self._step_count

    @property
    def is_captured(self) -> bool:
        return self.graph_id is not None

    def step_mode(self) -> StepMode:
        if not self._enabled or self._step_count < self.warmup_steps:
            return StepMode.WARMUP
        if self._step_count == self.warmup_steps and not self.capture_attempted:
            return StepMode.CAPTURE
        return StepMode.REPLAY

    def advance(self) -> None:
        self._step_count += 1

    def record_capture(self, graph_id: int, batch_size: int, seq_step: int) -> None:
        self.graph_id = graph_id
        self.capture_attempted = True
        self._captured_shape = (batch_size, seq_step)

    def check_static_shape(self, batch_size: int, seq_step: int) -> bool:
        """True only if a capture was recorded with exactly this shape."""
        return self._captured_shape == (batch_size, seq_step)

    def disable(self) -> None:
        self._enabled = False
