# bug: bump adds 1 whatever k is
# bug-lines: 34
"""My CUDA-graph lab (CPU simulation with numpy and a launch counter)."""

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Op = Callable[[np.ndarray], np.ndarray]
Shape = tuple[int, ...]


class LaunchCounter:
    """Global tally of kernel launches: your stand-in for CPU launch overhead.

    ``n`` is a class attribute, not an instance attribute, so that every
    runner in the program adds to one shared count (every real kernel launch
    costs the same CPU). The grader reads ``LaunchCounter.n`` before and after
    each call to see what the call cost.
    """

    n: int = 0

    @classmethod
    def reset(cls) -> None:
        """Set the count back to 0."""
        cls.n = 0

    @classmethod
    def bump(cls, k: int = 1) -> None:
        """Add ``k`` launches to the count."""
        cls.n += 1


def run_eager(ops: Sequence[Op], x: np.ndarray) -> np.ndarray:
    """Run ``ops`` in order on ``x`` and return the result.

    Call ``LaunchCounter.bump(1)`` once per op. This is PyTorch eager mode,
    the baseline: the launch overhead is paid per op, on every single call.
    Each op receives the previous op's result; the first one receives ``x``.
    """
    out = x
    for op in ops:
        out = op(out)
        LaunchCounter.bump(1)
    return out


@dataclass(eq=False)
class GraphEntry:
    """The record of one captured graph. Provided for you: it holds data only.

    - ``shape``: the input shape the graph was captured for (after padding).
    - ``static_input``: the buffer the graph reads its input from. A CUDA
      graph bakes in memory addresses, so this must stay the SAME array
      object for the life of the graph.
    - ``output``: the result of the capture [handout]; after each replay,
      the result of that replay [graphgrade, outside the core points].
    - ``num_ops``: how many ops (kernels) the graph holds.
    """

    shape: Shape
    static_input: np.ndarray
    output: np.ndarray
    num_ops: int


class GraphRunner:
    """Capture ``ops`` once per input shape, then replay with one launch.

    This is the heart of a CUDA-graph runner such as nano-vllm's
    ``capture_cudagraph`` / ``run_model`` or vLLM's CUDA-graph wrapper.

    ``__call__(x)`` works like this.

    Capture (the first time a shape is seen) [handout]:
      Make a new static input buffer, copy ``x`` into it, run the ops on that
      buffer (one launch per op, as eager mode does) and store a
      ``GraphEntry`` in ``self.graphs``. Return the output.
      Constraint 1: a real graph is frozen to its shapes, so graphs are keyed
      by shape; ``self.graphs`` maps a key to its entry.

    Replay (the shape was seen before) [handout]:
      Copy ``x`` into the entry's ``static_input`` in place (``np.copyto``):
      never allocate a new buffer, because the captured graph only ever reads
      the old one. Then recompute the ops starting from that buffer (the first
      op must receive ``entry.static_input`` itself) and call
      ``LaunchCounter.bump(1)`` ONCE for the whole replay, and return the
      result. [graphgrade, outside the core points:] also store it in
      ``entry.output``.
      Constraint 2: new inputs must land in the fixed buffer.
      The win: one launch instead of ``len(ops)``.

    ``num_captured`` is how many graphs exist.

    Stretch, padding (``capture_sizes``, e.g. ``[1, 2, 4, 8]``):
      vLLM captures graphs for a few batch sizes only and pads a batch up to
      the nearest one. [handout] Round the batch dimension (axis 0) up to the
      smallest capture size that holds it and key on that padded shape, so
      batches 5 and 7 share the size-8 graph. [graphgrade] The static buffer
      has the padded shape: copy the real rows in and set the padded rows to
      zero on every call (capture and replay), so no stale rows from an
      earlier, larger batch survive; the grader looks at the rows the first
      op is handed. Return only the real rows. A batch larger than every
      capture size runs eagerly (one launch per op) and is never captured,
      as vLLM does.

    Stretch, warm-up (``warmup_steps=N``) [graphgrade: the handout has none]:
      Engines run a few eager steps before capturing so that lazy
      initialisation (kernel selection, allocator pools) is not frozen into
      the graph. For each key, the first N calls run eagerly, the next call
      captures and later calls replay. The count is kept per key and per
      runner. ``warmup_steps=0`` (the default) means no warm-up, and so does
      any value below 0: the first call of a key captures.

    You may return a fresh array or the output array itself. Real engines
    return a view of their static output buffer, which the next replay
    overwrites; both are accepted here.
    """

    def __init__(
        self,
        ops: Sequence[Op],
        capture_sizes: Sequence[int] | None = None,
        warmup_steps: int = 0,
    ) -> None:
        """Keep the ops and settings; start with ``self.graphs = {}``."""
        self.ops = list(ops)
        self.capture_sizes = sorted(capture_sizes) if capture_sizes else None
        self.warmup_steps = max(0, warmup_steps)
        self.graphs = {}
        self.seen = {}  # key -> eager warm-up calls so far

    @property
    def num_captured(self) -> int:
        """How many graphs have been captured so far."""
        return len(self.graphs)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Run the ops on ``x``: eagerly, by capturing, or by replaying."""
        rows = x.shape[0]
        padded = x
        if self.capture_sizes is not None:
            size = self.pad_to(rows)
            if size is None:  # too big for every graph: run it eagerly
                return run_eager(self.ops, x)
            padded = np.zeros((size,) + x.shape[1:], dtype=x.dtype)
            padded[:rows] = x
        key = padded.shape

        if key not in self.graphs:
            done = self.seen.get(key, 0)
            if done < self.warmup_steps:
                self.seen[key] = done + 1
                return run_eager(self.ops, x)
            static = np.empty(key, dtype=padded.dtype)
            np.copyto(static, padded)
            out = static
            for op in self.ops:
                out = op(out)
                LaunchCounter.bump(1)
            self.graphs[key] = GraphEntry(key, static, out, len(self.ops))
            return out[:rows]

        entry = self.graphs[key]
        np.copyto(entry.static_input, padded)
        out = entry.static_input
        for op in self.ops:
            out = op(out)
        LaunchCounter.bump(1)
        entry.output = out
        return out[:rows]

    def pad_to(self, rows):
        for size in self.capture_sizes:
            if size >= rows:
                return size
        return None


class PiecewiseGraphRunner:
    """Capture the parts of a model that can be captured; run the rest eagerly.

    Attention reads per-request metadata (sequence lengths, block tables) that
    a graph cannot freeze, so vLLM's piecewise mode splits the model at
    attention: the stretches between attention layers are captured, and
    attention itself runs eagerly.

    Walk the ops and group consecutive ops with the same ``is_capturable(i)``
    (``i`` is the op's index) into segments. Wrap each capturable segment in
    its own ``GraphRunner``; keep the other segments as plain op lists and
    run them with ``run_eager``. ``__call__`` threads ``x`` through the
    segments in order. [handout, all of it; ``capture_sizes`` here is
    accepted and passed on to each ``GraphRunner``, but never graded.]

    ``num_graphs`` is the number of capturable segments. Split a 3-op model at
    its middle op and you get two graphs, and a replay costs three launches:
    one per graph plus one for the eager op.
    """

    def __init__(
        self,
        ops: Sequence[Op],
        is_capturable: Callable[[int], bool],
        capture_sizes: Sequence[int] | None = None,
    ) -> None:
        """Build the segments and a ``GraphRunner`` for each capturable one."""
        self.segments = []  # (capturable, ops, runner or None)
        current = []
        flag = None
        for i, op in enumerate(ops):
            c = bool(is_capturable(i))
            if current and c != flag:
                self.segments.append(self.make_segment(flag, current, capture_sizes))
                current = []
            flag = c
            current.append(op)
        if current:
            self.segments.append(self.make_segment(flag, current, capture_sizes))

    def make_segment(self, capturable, ops, capture_sizes):
        runner = GraphRunner(ops, capture_sizes) if capturable else None
        return (capturable, ops, runner)

    @property
    def num_graphs(self) -> int:
        """Number of capturable segments."""
        return sum(1 for capturable, _, _ in self.segments if capturable)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Feed ``x`` through every segment in order and return the result."""
        for capturable, ops, runner in self.segments:
            if capturable:
                x = runner(x)
            else:
                x = run_eager(ops, x)
        return x


def fuse_elementwise(ops: Sequence[Op]) -> list[Op]:
    """Stretch: merge each run of adjacent elementwise ops into one op.

    This is the torch.compile half of the story: the compiler fuses ``+1``
    followed by ``*2`` into one kernel, so even eager execution launches
    fewer kernels, and a captured graph holds fewer nodes.

    [handout] Fuse adjacent elementwise ops into one op and show that it
    reduces launches, even eagerly. [graphgrade] The exact rules below.
    An op is elementwise when ``getattr(op, "elementwise", False)`` is true.
    Replace every run of two or more ADJACENT elementwise ops with one new
    callable that applies them in their original order, and mark that
    callable ``elementwise = True``. A run is merged whole, not in pairs:
    with ``a``, ``b``, ``c`` elementwise and ``S`` not,
    ``[a, b, c, S, a, b]`` becomes ``[fused(a, b, c), S, fused(a, b)]``. Leave every other op alone (the very
    same object, in the same place), including a lone elementwise op. Return
    a new list; do not modify ``ops``. The outputs must not change.
    """
    result = []
    run = []
    for op in list(ops) + [None]:
        if op is not None and getattr(op, "elementwise", False):
            run.append(op)
            continue
        if len(run) == 1:
            result.append(run[0])
        elif len(run) > 1:
            result.append(make_fused(run))
        run = []
        if op is not None:
            result.append(op)
    return result


def make_fused(group):
    group = list(group)

    def fused(x):
        for op in group:
            x = op(x)
        return x

    fused.elementwise = True
    return fused


class StepMode(enum.Enum):
    """What the decode loop should do this step. Provided for you."""

    WARMUP = "warmup"
    CAPTURE = "capture"
    REPLAY = "replay"


class InferenceGraphCapture:
    """Stretch: the decode-step state machine of an inference engine.

    The decode step has a static shape (fixed batch, one new token per
    sequence), so an engine can capture it once and replay it on every later
    step. Before each step the engine asks ``step_mode()``; after the step it
    calls ``advance()``.

    Rules [plan, except where marked]:
    - ``warmup_steps`` below 1 is raised to 1: kernels must run at least
      once before capture (0 [plan]; -1, -5, ... [graphgrade]).
    - Graphs are disabled unless ``enabled=True``; ``disable()`` turns them
      off for good (after a shape change or a failed capture).
    - ``step_mode()`` returns ``WARMUP`` while disabled or while
      ``step_count < warmup_steps``; ``CAPTURE`` when
      ``step_count == warmup_steps`` and no capture was attempted yet;
      ``REPLAY`` otherwise. So CAPTURE happens at most once.
    - ``graph_id`` (``None`` at first) and ``capture_attempted`` (``False``
      at first) are plain attributes. A caller whose capture failed may set
      ``capture_attempted = True`` without recording anything.
    - ``step_count`` and ``is_captured`` are read-only properties;
      ``is_captured`` means ``graph_id is not None`` (an id of 0 counts).
    """

    def __init__(self, warmup_steps: int, enabled: bool = False) -> None:
        """Set up a machine at step 0 with nothing captured."""
        self.warmup_steps = max(1, warmup_steps)
        self.enabled = enabled
        self._steps = 0
        self.graph_id = None
        self.capture_attempted = False
        self.batch_size = None
        self.seq_step = None

    @property
    def step_count(self) -> int:
        """How many steps ``advance()`` has counted."""
        return self._steps

    @property
    def is_captured(self) -> bool:
        """True once a graph id is stored."""
        return self.graph_id is not None

    def step_mode(self) -> StepMode:
        """WARMUP, CAPTURE or REPLAY for the current step (see the rules)."""
        if not self.enabled or self._steps < self.warmup_steps:
            return StepMode.WARMUP
        if self._steps == self.warmup_steps and not self.capture_attempted:
            return StepMode.CAPTURE
        return StepMode.REPLAY

    def advance(self) -> None:
        """Count one finished step, whatever its mode."""
        self._steps += 1

    def record_capture(self, graph_id: int, batch_size: int, seq_step: int) -> None:
        """Store the graph id and the shape it was captured with.

        Also mark the capture as attempted, so ``step_mode()`` moves on to
        REPLAY.
        """
        self.graph_id = graph_id
        self.batch_size = batch_size
        self.seq_step = seq_step
        self.capture_attempted = True

    def check_static_shape(self, batch_size: int, seq_step: int) -> bool:
        """Is it safe to replay a graph for this shape?

        True only when a capture was recorded and both ``batch_size`` and
        ``seq_step`` equal the recorded values; false before any capture.
        A graph replayed on a different shape would read the wrong memory.
        """
        if self.graph_id is None:
            return False
        return batch_size == self.batch_size and seq_step == self.seq_step

    def disable(self) -> None:
        """Turn graphs off for good: ``step_mode()`` answers WARMUP from now on."""
        self.enabled = False
