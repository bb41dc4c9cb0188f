"""Real CUDA graphs on CuPy, with the same contract as the numpy simulation.

The lab's simulation (``reference/cudagraph.py``) counts launches instead of
timing them. This module does the same things on a GPU, so that every
simulated idea has a real counterpart you can run and time. Read the two side
by side; the table below says what each simulated step becomes.

=============================  ===============================================
simulation                     real CUDA (this module)
=============================  ===============================================
``LaunchCounter.bump()``       the CPU cost of one kernel launch (Python
                               dispatch + ``cudaLaunchKernel``). The counter is
                               shared with the simulation and counts in the same
                               units, so the same specs can judge both.
``run_eager(ops, x)``          every op launches its own kernel from Python,
                               every step.
capture (key unseen)           1. allocate the static input on the device and
                               copy ``x`` into it (before capture);
                               2. warm-up: run the ops once for real on the
                               capture stream (kernels get JIT-compiled, the
                               grader's matmul weights reach the device;
                               nothing of that may happen while capturing);
                               3. ``stream.begin_capture()``, run the ops (their
                               kernels are *recorded*, not executed),
                               ``graph = stream.end_capture()`` (instantiated);
                               4. ``graph.launch(stream)`` once, which fills the
                               static output and proves the graph works.
``GraphEntry.static_input``    a device buffer whose *address* is baked into
                               the recorded kernels. That is Constraint 2: new
                               data must be copied into this very buffer.
``GraphEntry.output``          the buffer the last recorded kernel writes. It is
                               taken from a memory pool private to this graph,
                               so nothing else can ever be given that memory;
                               each replay overwrites it (callers get a view).
keyed by shape                 grid sizes and buffer addresses are frozen into
                               the graph, so a new shape needs a new graph
                               (Constraint 1).
replay: ``bump(1)``            ``static[...] = x`` on the capture stream, then
                               one ``graph.launch(stream)``: a single
                               ``cudaGraphLaunch`` however many kernels.
``capture_sizes`` / padding    vLLM's capture sizes: a batch is padded up to the
                               nearest captured size (pad rows zeroed); bigger
                               batches run eagerly.
``warmup_steps``               the first N calls of a shape run eagerly before
                               it is captured, as an engine's decode loop does.
``PiecewiseGraphRunner``       vLLM's piecewise mode: graphs around the parts
                               that cannot be captured (attention with dynamic
                               metadata, host syncs), which run eagerly between
                               graph launches, all on one stream.
``fuse_elementwise``           kernel fusion (what torch.compile does): a run of
                               elementwise ops whose CUDA bodies are known
                               becomes ONE ``cupy.ElementwiseKernel``.
=============================  ===============================================

What may not happen during capture is in :mod:`reference.device_ops` (the ops:
elementwise kernels; the grader's matmul is a broadcast product and a sum on CuPy,
its weights on the device before any capture). An op marked
``capturable = False`` (the spec vocabulary's ``attention``) is never
captured: a runner handed one runs that key eagerly on purpose. When a capture
fails anyway, the runner ends the capture cleanly (the stream never stays in
capture mode), keeps only the one-line reason (the exception, its frames and
the capture's private memory pool are released), remembers the key as
uncapturable (see ``GraphRunner.uncapturable``) and runs that key eagerly
from then on: the same decision as ``InferenceGraphCapture.disable()`` in an
inference engine. ``recording_captures()`` lets a caller (``graphgrade
validate --backend cupy``) see every such decision and its reason.

Streams: all of a runner's work (copies, eager ops, graph launches) goes to its
own non-blocking stream. A stream passed in must be able to capture: the
legacy default stream (``Stream.null``) and blocking streams are refused when
the runner is built. A call first makes that stream wait for the caller's
current stream and, on return, makes the caller's stream wait for it (CUDA
events, no host sync), so results can be used on the caller's stream at once.
Returned arrays may alias a graph's output buffer; they stay valid while the
runner lives and are overwritten by its next replay, as in real engines.

CuPy is imported lazily: importing this module never needs CuPy or a GPU. Use
``is_available()`` to ask; constructors raise ``CudaUnavailable`` when they
cannot work.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from .cudagraph import InferenceGraphCapture, LaunchCounter, StepMode
from .device_ops import DeviceOp, elementwise_chain, fuse_elementwise, host_sync_op  # the ops, beside the benchmark

__all__ = [
    "CudaUnavailable",
    "DeviceOp",
    "GraphEntry",
    "GraphRunner",
    "InferenceGraphCapture",
    "LaunchCounter",
    "PiecewiseGraphRunner",
    "StepMode",
    "elementwise_chain",
    "fuse_elementwise",
    "host_sync_op",
    "is_available",
    "recording_captures",
    "run_eager",
    "to_device",
    "to_host",
]


# --------------------------------------------------------------------------
# Availability
# --------------------------------------------------------------------------


class CudaUnavailable(Exception):
    """CuPy or a CUDA GPU is missing; the message is one line saying which."""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def probe(want_name: bool = True) -> tuple[str, str]:
    """Return (kind, detail): kind is "ok", "missing", "broken", "no-gpu" or
    "unsupported"; detail is the device name (or "" when ``want_name`` is
    false) or the reason. Never raises."""
    try:
        import cupy
    except ModuleNotFoundError as exc:
        if exc.name in (None, "cupy"):
            return "missing", "CuPy is not installed"
        return "broken", f"CuPy failed to import: {_one_line(exc)}"
    except Exception as exc:  # a broken install (wrong CUDA wheel, ...)
        return "broken", f"CuPy failed to import: {_one_line(exc)}"
    try:
        runtime = cupy.cuda.runtime
        count = runtime.getDeviceCount()
    except Exception as exc:
        return "no-gpu", _one_line(exc)
    if count < 1:
        return "no-gpu", "getDeviceCount() returned 0"
    if getattr(runtime, "is_hip", False):
        return "unsupported", "stream capture is not supported by CuPy on ROCm/HIP"
    if not want_name:
        return "ok", ""
    try:
        device_id = cupy.cuda.Device().id
        name = runtime.getDeviceProperties(device_id)["name"]
        if isinstance(name, bytes):
            name = name.decode("utf-8", "replace")
        return "ok", str(name).strip() or f"CUDA device {device_id}"
    except Exception as exc:
        return "no-gpu", _one_line(exc)


def is_available() -> tuple[bool, str]:
    """``(True, device name)`` when CuPy can run graphs here, else
    ``(False, one-line reason)``. Never raises."""
    kind, detail = probe()
    if kind == "ok":
        return True, detail
    if kind == "no-gpu":
        return False, f"no CUDA GPU is visible: {detail}"
    return False, detail


def _cupy():
    """Import CuPy for a constructor; raise CudaUnavailable if it cannot run."""
    kind, detail = probe(want_name=False)
    if kind != "ok":
        raise CudaUnavailable(f"no CUDA GPU is visible: {detail}" if kind == "no-gpu" else detail)
    import cupy

    return cupy


def _is_cupy_array(value: Any) -> bool:
    # Decided without importing CuPy, so numpy-only callers never pay for it.
    return type(value).__module__.split(".")[0] == "cupy" and hasattr(value, "get")


def to_device(array: Any):
    """Copy a numpy array (or anything array-like) to the current device."""
    import cupy

    return cupy.asarray(array)


def to_host(value: Any) -> Any:
    """Return ``value`` with CuPy arrays replaced by numpy copies (recursing
    into lists, tuples and dicts); anything else comes back unchanged."""
    if _is_cupy_array(value):
        return value.get()
    if isinstance(value, (list, tuple)):
        converted = [to_host(v) for v in value]
        return type(value)(converted) if isinstance(value, list) else tuple(converted)
    if isinstance(value, dict):
        return {k: to_host(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------
# Eager execution
# --------------------------------------------------------------------------


def run_eager(ops: Sequence[Callable], x):
    """Apply ``ops`` in order on the current stream, one launch each."""
    for op in ops:
        x = op(x)
        LaunchCounter.bump(1)
    return x


# --------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------


class _StreamScope:
    """Runs work on a runner's stream, ordered after the caller's stream.

    Entering: an event recorded on the caller's current stream is waited on by
    the runner's stream (inputs written by the caller are ready, and the caller
    has finished reading the previous, aliased output). Leaving: the reverse,
    so the caller may use what we produced. No host synchronisation.
    """

    def __init__(self, cupy, stream):
        self._cupy = cupy
        self.stream = stream
        self._in = cupy.cuda.Event(disable_timing=True)
        self._out = cupy.cuda.Event(disable_timing=True)

    @contextlib.contextmanager
    def enter(self):
        caller = self._cupy.cuda.get_current_stream()
        if caller == self.stream:  # already on our stream (nested runners)
            yield
            return
        self._in.record(caller)
        self.stream.wait_event(self._in)
        try:
            with self.stream:
                yield
        finally:
            self._out.record(self.stream)
            caller.wait_event(self._out)


def _leave_capture_mode(stream) -> None:
    """Make sure ``stream`` is not capturing any more (best effort)."""
    try:
        capturing = stream.is_capturing()
    except Exception:  # CuPy raises when the capture was invalidated
        capturing = True
    if capturing:
        try:
            stream.end_capture()
        except Exception:
            pass


# --------------------------------------------------------------------------
# Capture decisions, for callers that must say why a key runs eagerly
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CaptureRecord:
    """One key a runner did not capture: ``on_purpose`` when an op is marked
    ``capturable = False`` (not attempted), otherwise the capture failed."""

    key: Any
    ops: tuple[str, ...]
    reason: str
    on_purpose: bool


_LISTENERS: list[list] = []


@contextlib.contextmanager
def recording_captures():
    """Collect a ``CaptureRecord`` for every key not captured inside the block."""
    records: list[CaptureRecord] = []
    _LISTENERS.append(records)
    try:
        yield records
    finally:
        # By identity: nested recorders hold lists that may compare equal.
        _LISTENERS[:] = [listener for listener in _LISTENERS if listener is not records]


def _report(key, ops, reason: str, on_purpose: bool) -> None:
    record = CaptureRecord(key, tuple(_op_label(op) for op in ops), reason, on_purpose)
    for records in _LISTENERS:
        records.append(record)


def _op_label(op: Any) -> str:
    name = getattr(op, "__name__", None)
    return name if isinstance(name, str) and name else repr(op)


def _is_non_blocking(cupy, stream) -> bool | None:
    """``Stream.is_non_blocking`` (recent CuPy), else the stream's flags; None if unknown."""
    try:
        return bool(stream.is_non_blocking)
    except AttributeError:
        pass
    runtime = cupy.cuda.runtime
    try:
        return bool(runtime.streamGetFlags(stream.ptr) & runtime.streamNonBlocking)
    except AttributeError:
        return None


def _capture_stream(cupy, stream):
    """The runner's stream: a new non-blocking one, or the caller's if it can capture."""
    if stream is None:
        return cupy.cuda.Stream(non_blocking=True)
    if getattr(stream, "ptr", None) in (0, 1):
        raise ValueError(
            "the legacy default stream (cupy.cuda.Stream.null) cannot capture a graph: "
            "pass cupy.cuda.Stream(non_blocking=True)"
        )
    if _is_non_blocking(cupy, stream) is False:
        raise ValueError(
            "a blocking stream cannot capture safely (any use of the legacy stream during "
            "the capture invalidates it): pass cupy.cuda.Stream(non_blocking=True)"
        )
    return stream


# --------------------------------------------------------------------------
# Graph capture and replay
# --------------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class GraphEntry:
    """One captured graph: the contract's four fields plus what keeps it alive.

    ``shape`` is the (padded) shape the graph was captured for;
    ``static_input`` the device buffer the graph reads; ``output`` the device
    buffer it writes; ``num_ops`` how many ops it replaces.
    """

    shape: tuple
    static_input: Any
    output: Any
    num_ops: int
    graph: Any = None  # cupy.cuda.Graph (instantiated, launchable)
    pool: Any = None  # private cupy.cuda.MemoryPool holding the graph's buffers
    stream: Any = None  # the stream it was captured on and is replayed on


def _validate_capture_sizes(capture_sizes) -> tuple[int, ...] | None:
    """Sorted sizes; None means "no padding". An empty list, as in the
    simulation, means no batch fits, so everything runs eagerly."""
    if capture_sizes is None:
        return None
    sizes = []
    for size in capture_sizes:
        if isinstance(size, bool) or int(size) != size or int(size) < 1:
            raise ValueError(f"capture_sizes must be positive integers, got {size!r}")
        sizes.append(int(size))
    return tuple(sorted(set(sizes)))


class GraphRunner:
    """Capture ``ops`` once per input shape, then replay with one launch.

    ``GraphRunner(ops, capture_sizes=None, warmup_steps=0)`` as in the
    simulation. ``stream`` (keyword only) lets several runners share one
    non-blocking stream; by default each runner creates its own. The legacy
    stream and blocking streams are refused (``ValueError``).

    Attributes: ``graphs`` (key -> GraphEntry, key = (padded shape, dtype
    name): the dtype is part of the key because a device buffer has one),
    ``num_captured``, ``uncapturable`` (key -> why its capture failed; those
    keys run eagerly), ``stream``.

    Launch counting is the simulation's: an eager call and a capture call
    bump once per op (on a capture call that is the warm-up run, the one that
    executes the ops; recording launches nothing, and the single graph launch
    that then fills the output belongs to the capture), a replay bumps once.
    """

    def __init__(self, ops, capture_sizes=None, warmup_steps=0, *, stream=None):
        cupy = _cupy()
        self._cp = cupy
        self.ops = list(ops)
        self.capture_sizes = _validate_capture_sizes(capture_sizes)
        if isinstance(warmup_steps, bool) or int(warmup_steps) != warmup_steps:
            raise ValueError(f"warmup_steps must be an integer, got {warmup_steps!r}")
        self.warmup_steps = max(0, int(warmup_steps))
        self.stream = _capture_stream(cupy, stream)
        self._scope = _StreamScope(cupy, self.stream)
        self.graphs: dict[Any, GraphEntry] = {}
        self.uncapturable: dict[Any, str] = {}
        self._eager_calls: dict[Any, int] = {}
        self._kept_pools: list = []  # pools of failed captures that still hold an op's buffer
        marked = [_op_label(op) for op in self.ops if getattr(op, "capturable", True) is False]
        self._declined = f"not captured on purpose: {', '.join(marked)} marked capturable = False" if marked else None

    @property
    def num_captured(self) -> int:
        return len(self.graphs)

    # -- keys and buffers ------------------------------------------------
    def _padded_shape(self, x) -> tuple | None:
        """Shape to capture for ``x``; None means "too big, run eagerly"."""
        shape = tuple(x.shape)
        if self.capture_sizes is None or not shape:
            return shape
        batch = shape[0]
        for size in self.capture_sizes:
            if size >= batch:
                return (size,) + shape[1:]
        return None

    def _fill_static(self, static, x) -> None:
        """Copy ``x`` into ``static`` on the current (runner) stream; zero the
        padded rows so stale data from a bigger batch never leaks in."""
        rows = x.shape[0] if x.ndim else None
        if rows is None or rows == static.shape[0]:
            static[...] = x
        else:
            static[:rows] = x
            static[rows:] = 0

    @staticmethod
    def _real_rows(out, x, padded: bool):
        if padded and getattr(out, "ndim", 0) and out.shape[0] != x.shape[0]:
            return out[: x.shape[0]]
        return out

    # -- the three paths -------------------------------------------------
    def __call__(self, x):
        cp = self._cp
        if not isinstance(x, cp.ndarray):
            x = cp.asarray(x)
        with self._scope.enter():
            shape = self._padded_shape(x)
            if shape is None:  # larger than every capture size: never captured
                return run_eager(self.ops, x)
            key = (shape, x.dtype.name)
            if key in self.uncapturable:
                return run_eager(self.ops, x)
            entry = self.graphs.get(key)
            if entry is not None:
                return self._replay(entry, x)
            seen = self._eager_calls.get(key, 0)
            if seen < self.warmup_steps:
                self._eager_calls[key] = seen + 1
                return run_eager(self.ops, x)
            if self._declined is not None:  # an op that may not live in a graph
                self.uncapturable[key] = self._declined
                _report(key, self.ops, self._declined, on_purpose=True)
                return run_eager(self.ops, x)
            return self._capture(key, shape, x)

    def _replay(self, entry: GraphEntry, x):
        self._fill_static(entry.static_input, x)  # Constraint 2: same buffer
        entry.graph.launch(self.stream)  # the win: one launch
        LaunchCounter.bump(1)
        return self._real_rows(entry.output, x, entry.shape != tuple(x.shape))

    def _capture(self, key, shape, x):
        cp = self._cp
        padded = shape != tuple(x.shape)
        # 1. Static input: allocated and filled before capture, kept by the entry.
        static = cp.empty(shape, dtype=x.dtype)
        self._fill_static(static, x)
        # 2. Warm-up: a real run (counted: one launch per op) from the ordinary
        # pool. It compiles the kernels and fills caches (the grader's matmul
        # weights reach the device here), none of which may happen while capturing.
        warm = run_eager(self.ops, static)
        self._fill_static(static, x)  # in case an op wrote to its input
        pool = cp.cuda.MemoryPool()
        output, graph, reason = self._record(pool, static)
        if reason is None and not isinstance(output, cp.ndarray):
            reason = f"TypeError: an op returned {type(output).__name__}, not a device array"
        if reason is None:
            try:
                # 4. Launch once: fills the static output and proves the graph.
                graph.launch(self.stream)
            except Exception as exc:
                reason = f"{type(exc).__name__}: {_one_line(exc)}"
        if reason is not None:
            # Keep the reason only: the partial graph, its buffers and the
            # private pool go now (the exception went with _record's frame).
            output = graph = None
            pool.free_all_blocks()
            if pool.used_bytes():  # an op kept a buffer: its memory must outlive us
                self._kept_pools.append(pool)
            del pool
            self.uncapturable[key] = reason
            _report(key, self.ops, reason, on_purpose=False)
            return self._real_rows(warm, x, padded)
        del warm  # back to the ordinary pool; the graph's buffers live in its own
        entry = GraphEntry(
            shape=shape,
            static_input=static,
            output=output,
            num_ops=len(self.ops),
            graph=graph,
            pool=pool,
            stream=self.stream,
        )
        self.graphs[key] = entry
        return self._real_rows(output, x, padded)

    def _record(self, pool, static):
        """3. Record the ops on the runner's stream into a graph whose buffers
        come from ``pool`` (private: nothing else is ever given that memory).
        Returns (output, graph, None) or (None, None, one-line reason); the
        exception itself is not kept, so nothing it references outlives this call."""
        cp, stream = self._cp, self.stream
        reason = None
        output = graph = None
        with cp.cuda.using_allocator(pool.malloc):
            try:
                stream.begin_capture()
            except Exception as exc:
                return None, None, f"{type(exc).__name__}: {_one_line(exc)}"
            try:
                y = static
                for op in self.ops:
                    y = op(y)
                output = y
            except Exception as exc:  # e.g. a host sync or a cuBLAS call inside an op
                reason = f"{type(exc).__name__}: {_one_line(exc)}"
            finally:
                y = None
                try:
                    graph = stream.end_capture()
                except Exception as exc:  # the capture was invalidated
                    graph = None
                    reason = reason or f"{type(exc).__name__}: {_one_line(exc)}"
                _leave_capture_mode(stream)
        if reason is not None:
            return None, None, reason
        return output, graph, None


def _segments(n: int, is_capturable: Callable[[int], bool]) -> list[tuple[bool, list[int]]]:
    segments: list[tuple[bool, list[int]]] = []
    for i in range(n):
        flag = bool(is_capturable(i))
        if segments and segments[-1][0] == flag:
            segments[-1][1].append(i)
        else:
            segments.append((flag, [i]))
    return segments


class PiecewiseGraphRunner:
    """Graphs for the capturable runs of ops, eager execution in between.

    Consecutive ops with equal ``is_capturable(i)`` form a segment; capturable
    segments get a ``GraphRunner`` each, all sharing one stream with the eager
    segments so the order of work is the order of ops. As in the simulation,
    ``segments`` lists ``(capturable, ops)`` pairs, ``runners`` the matching
    GraphRunner (None for an eager segment) and ``num_graphs`` counts the
    capturable segments.
    """

    def __init__(self, ops, is_capturable, capture_sizes=None, *, stream=None):
        cupy = _cupy()
        self._cp = cupy
        self.ops = list(ops)
        self.stream = _capture_stream(cupy, stream)
        self._scope = _StreamScope(cupy, self.stream)
        self.segments: list[tuple[bool, list]] = [
            (capturable, [self.ops[i] for i in indices])
            for capturable, indices in _segments(len(self.ops), is_capturable)
        ]
        self.runners: list[GraphRunner | None] = [
            GraphRunner(seg_ops, capture_sizes, stream=self.stream) if capturable else None
            for capturable, seg_ops in self.segments
        ]

    @property
    def num_graphs(self) -> int:
        return sum(1 for runner in self.runners if runner is not None)

    def __call__(self, x):
        cp = self._cp
        if not isinstance(x, cp.ndarray):
            x = cp.asarray(x)
        with self._scope.enter():
            for (_, seg_ops), runner in zip(self.segments, self.runners):
                x = run_eager(seg_ops, x) if runner is None else runner(x)
            return x
