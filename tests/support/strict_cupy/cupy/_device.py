"""The device model of the strict CuPy stand-in: streams, capture, graphs, events, memory.

Work on a stream runs at once, unless the stream is capturing: then it is
*recorded* as a graph node and runs only when the graph is launched (the
output buffers hold garbage until then, as on a GPU). What CUDA and CuPy
refuse while a stream captures is refused here with the same exception types
and messages (CuPy 13/14 on CUDA 12):

- synchronising the capturing stream, the device, or reading a value back to
  the host: ``CUDARuntimeError`` cudaErrorStreamCaptureUnsupported, and the
  capture is invalidated (``end_capture`` then raises
  cudaErrorStreamCaptureInvalidated);
- querying or waiting on an event recorded during a capture:
  cudaErrorCapturedEvent (this is what sinks ``cupy.asarray(host)``: CuPy
  stages the copy through pinned memory and asks ``event.done``);
- a capturing stream waiting on an event recorded outside it:
  cudaErrorStreamCaptureIsolation, and the capture is invalidated;
- any use of the legacy stream while a *blocking* stream captures:
  cudaErrorStreamCaptureImplicit;
- ``begin_capture`` on the legacy stream: ``RuntimeError('cannot capture on
  the default (legacy) stream')``;
- cuBLAS, cuSOLVER, cuRAND: ``NotImplementedError('calling cuBLAS API during
  stream capture is currently unsupported')`` (CuPy's check in setStream).

Not modelled: asynchrony between streams (work runs in program order, so a
missing cross-stream wait is not caught), cross-stream capture (fork/join),
multiple devices.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
import weakref

import numpy as np

# ---------------------------------------------------------------- errors
_ERRORS = {
    400: ("cudaErrorInvalidResourceHandle", "invalid resource handle"),
    401: ("cudaErrorIllegalState", "the operation cannot be performed in the present state"),
    900: ("cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"),
    901: ("cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"),
    905: ("cudaErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream"),
    906: (
        "cudaErrorStreamCaptureImplicit",
        "operation would make the legacy stream depend on a capturing blocking stream",
    ),
    907: ("cudaErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream"),
}


class CUDARuntimeError(RuntimeError):
    """As ``cupy.cuda.runtime.CUDARuntimeError``: ``status`` and "name: message"."""

    def __init__(self, status: int) -> None:
        self.status = status
        name, message = _ERRORS[status]
        super().__init__(f"{name}: {message}")

    def __reduce__(self):
        return (type(self), (self.status,))


def library_call(name: str) -> None:
    """What CuPy does before every cuBLAS / cuSOLVER / cuRAND call on the current stream."""
    stream = get_current_stream()
    if stream.is_capturing():
        raise NotImplementedError(f"calling {name} API during stream capture is currently unsupported")


# ---------------------------------------------------------------- capture state
class _Capture:
    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.nodes: list = []
        self.invalid = False


_captures: list[_Capture] = []  # active captures (one per capturing stream)
_ptrs = itertools.count(0x1000)
_local = threading.local()


def _blocking_capture() -> _Capture | None:
    for capture in _captures:
        if not capture.stream._non_blocking:
            return capture
    return None


def _check_legacy(stream: Stream) -> None:
    """Any use of the legacy stream while a blocking stream captures is illegal."""
    if stream.ptr in (0, 1):
        capture = _blocking_capture()
        if capture is not None:
            capture.invalid = True
            raise CUDARuntimeError(906)


def submit(node) -> None:
    """Enqueue ``node`` (a callable doing device work) on the current stream."""
    stream = get_current_stream()
    _check_legacy(stream)
    capture = stream._capture
    if capture is None:
        node()
    elif capture.invalid:
        raise CUDARuntimeError(901)
    else:
        capture.nodes.append(node)


def forbid_sync(stream: Stream) -> None:
    """A host synchronisation with ``stream`` (``.get()``, ``float()``, ``synchronize``)."""
    _check_legacy(stream)
    if stream._capture is not None:
        stream._capture.invalid = True
        raise CUDARuntimeError(900)


def host_read_check() -> None:
    forbid_sync(get_current_stream())


# ---------------------------------------------------------------- streams
def _stack() -> list:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = [Stream.null]
    return stack


def get_current_stream(device_id: int = -1) -> Stream:
    return _stack()[-1]


class Stream:
    """``cupy.cuda.Stream(null=False, non_blocking=False, ptds=False)``."""

    null: Stream

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False, priority=None) -> None:
        if null:
            self.ptr = 0
        elif ptds:
            self.ptr = 2
        else:
            self.ptr = next(_ptrs)
        self.device_id = -1 if (null or ptds) else 0
        self._non_blocking = bool(non_blocking)
        self._capture: _Capture | None = None

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        return f"<Stream {self.ptr} (device {self.device_id})>"

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc) -> None:
        _stack().pop()

    def use(self):
        _stack()[-1] = self
        return self

    @property
    def is_non_blocking(self) -> bool:
        return self._non_blocking

    @property
    def done(self) -> bool:
        forbid_sync(self)  # cudaStreamQuery during capture is illegal too
        return True

    def synchronize(self) -> None:
        forbid_sync(self)

    def record(self, event: Event | None = None) -> Event:
        event = event if event is not None else Event()
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        _check_legacy(self)
        capture = self._capture
        if capture is not None:
            if event._capture is not capture:  # an event from outside this capture
                capture.invalid = True
                raise CUDARuntimeError(905)
            return
        if event._capture is not None and event._capture in _captures:
            raise NotImplementedError("the strict CuPy stand-in does not model cross-stream capture (fork/join)")

    def begin_capture(self, mode=None) -> None:
        if self.ptr in (0, 1):
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if self._capture is not None:
            raise CUDARuntimeError(401)
        self._capture = _Capture(self)
        _captures.append(self._capture)

    def end_capture(self) -> Graph:
        capture = self._capture
        if capture is None:
            raise CUDARuntimeError(401)
        self._capture = None
        _captures.remove(capture)
        if capture.invalid:
            raise CUDARuntimeError(901)
        return Graph._from_nodes(capture.nodes)

    def is_capturing(self) -> bool:
        if self.ptr in (0, 1) and _blocking_capture() is not None:
            raise CUDARuntimeError(906)
        return self._capture is not None


Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)


class Graph:
    """An instantiated graph: the recorded nodes, run in order on ``launch``."""

    def __init__(self, *args, **kwargs) -> None:
        raise NotImplementedError(
            "currently this class cannot be initiated by the user and must be created via stream capture"
        )

    @classmethod
    def _from_nodes(cls, nodes) -> Graph:
        graph = object.__new__(cls)
        graph._nodes = tuple(nodes)
        graph.launches = 0
        return graph

    def launch(self, stream: Stream | None = None) -> None:
        nodes = self._nodes
        self.launches += 1

        def run() -> None:
            for node in nodes:
                node()

        target = stream if stream is not None else get_current_stream()
        with target:
            submit(run)

    def upload(self, stream: Stream | None = None) -> None:
        pass


# ---------------------------------------------------------------- events
class Event:
    """``cupy.cuda.Event(block=False, disable_timing=False, interprocess=False)``."""

    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False) -> None:
        if interprocess and not disable_timing:
            raise ValueError("Timing must be disabled for interprocess events")
        self._timing = not disable_timing
        self._capture: _Capture | None = None
        self._time: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        stream = stream if stream is not None else get_current_stream()
        _check_legacy(stream)
        if stream._capture is not None:
            self._capture, self._time = stream._capture, None
        else:
            self._capture, self._time = None, time.perf_counter()

    def _query(self) -> None:
        if self._capture is not None:
            raise CUDARuntimeError(907)

    @property
    def done(self) -> bool:
        self._query()
        return True

    def synchronize(self) -> None:
        self._query()


def get_elapsed_time(start: Event, end: Event) -> float:
    start._query()
    end._query()
    if not (start._timing and end._timing) or start._time is None or end._time is None:
        raise CUDARuntimeError(400)
    return (end._time - start._time) * 1000.0


# ---------------------------------------------------------------- device
class Device:
    def __init__(self, device=None) -> None:
        self.id = 0 if device is None else int(device)
        self.compute_capability = "90"

    def synchronize(self) -> None:
        if _captures:  # a device-wide sync encompasses every capturing stream
            for capture in _captures:
                capture.invalid = True
            raise CUDARuntimeError(900)

    def use(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


# ---------------------------------------------------------------- memory
class _Memory:
    """One device allocation: a host buffer standing in for device memory."""

    def __init__(self, size: int, pool: MemoryPool | None, buffer: np.ndarray | None = None) -> None:
        self.size = size
        if buffer is None:
            buffer = np.empty(max(size, 1), dtype=np.uint8)
            buffer.fill(0xFF)  # fresh device memory: garbage (NaN for floats)
        self.buffer = buffer
        self.ptr = int(buffer.__array_interface__["data"][0])
        if pool is not None:
            weakref.finalize(self, pool._release, size, buffer)


class MemoryPointer:
    def __init__(self, mem: _Memory, offset: int) -> None:
        self.mem = mem
        self.ptr = mem.ptr + offset


class MemoryPool:
    """``cupy.cuda.MemoryPool``: blocks return to the pool when their arrays die."""

    def __init__(self, allocator=None) -> None:
        self._lock = threading.Lock()
        self._free: dict[int, list[np.ndarray]] = {}
        self._used = 0

    def malloc(self, size: int) -> MemoryPointer:
        size = ((int(size) + 511) // 512) * 512
        with self._lock:
            free = self._free.get(size)
            buffer = free.pop() if free else None
            self._used += size
        return MemoryPointer(_Memory(size, self, buffer), 0)

    def _release(self, size: int, buffer: np.ndarray) -> None:
        with self._lock:
            self._used -= size
            self._free.setdefault(size, []).append(buffer)

    def used_bytes(self) -> int:
        return self._used

    def free_bytes(self) -> int:
        return sum(size * len(blocks) for size, blocks in self._free.items())

    def total_bytes(self) -> int:
        return self.used_bytes() + self.free_bytes()

    def n_free_blocks(self) -> int:
        return sum(len(blocks) for blocks in self._free.values())

    def free_all_blocks(self, stream=None) -> None:
        with self._lock:
            self._free.clear()


_default_pool = MemoryPool()


def _raw_malloc(size: int) -> MemoryPointer:
    return MemoryPointer(_Memory(int(size), None), 0)


def get_allocator():
    return getattr(_local, "allocator", _default_pool.malloc)


def set_allocator(allocator=None) -> None:
    _local.allocator = allocator if allocator is not None else _raw_malloc


@contextlib.contextmanager
def using_allocator(allocator=None):
    previous = get_allocator()
    set_allocator(allocator)
    try:
        yield
    finally:
        _local.allocator = previous


def alloc(size: int) -> MemoryPointer:
    return get_allocator()(size)


# ---------------------------------------------------------------- pinned memory
class PinnedMemoryPool:
    def __init__(self) -> None:
        self._free: dict[int, list[np.ndarray]] = {}

    def take(self, size: int) -> _Pinned:
        size = ((int(size) + 511) // 512) * 512
        free = self._free.get(size)
        return _Pinned(self, size, free.pop() if free else np.empty(max(size, 1), np.uint8))

    def n_free_blocks(self) -> int:
        return sum(len(b) for b in self._free.values())

    def free_all_blocks(self) -> None:
        self._free.clear()


class _Pinned:
    """A pinned staging buffer; back to its pool when this holder dies (the graph
    node that reads it keeps only the raw buffer, as a real memcpy node does)."""

    def __init__(self, pool: PinnedMemoryPool, size: int, buffer: np.ndarray) -> None:
        self.buffer = buffer
        weakref.finalize(self, lambda: pool._free.setdefault(size, []).append(buffer))


_pinned_pool = PinnedMemoryPool()
_watch_list: list = []


def add_to_watch_list(event: Event, obj) -> None:
    """CuPy's pinned-memory event watcher: holds ``obj`` until ``event`` is done."""
    for i in range(len(_watch_list) - 1, -1, -1):
        if _watch_list[i][0].done:
            del _watch_list[i]
    if event.done:  # cudaEventQuery: illegal on an event recorded during capture
        return
    _watch_list.append((event, obj))
