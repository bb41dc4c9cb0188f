"""The device ops of the CUDA path and of ``graphgrade bench`` (:mod:`reference.bench`), and
their fusion: each op one CUDA kernel (a cached ``cupy.ElementwiseKernel``), with its numpy
twin for the CPU benchmark and the references.

Only elementwise or custom kernels may be captured into a graph: anything that synchronises
with the host (``.get()``, ``float(x)``, ``stream.synchronize()``), host<->device transfers
and the library calls CuPy refuses to capture (cuBLAS, cuRAND, ...) may not happen during
capture. ``host_sync_op`` is such a call on purpose: the op no graph can hold.
:mod:`reference.cuda` re-exports these names (its runners take them like any op).

CuPy is imported lazily: building an op never needs CuPy or a GPU.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["DeviceOp", "elementwise_chain", "fuse_elementwise", "host_sync_op"]

_KERNELS: dict[tuple[str, str], Any] = {}
_KERNELS_LOCK = threading.Lock()


def _kernel(name: str, body: str):
    """One cached ``cupy.ElementwiseKernel`` computing ``y`` from ``x`` through
    the local variable ``v`` (``body`` updates ``v`` in place)."""
    key = (name, body)
    with _KERNELS_LOCK:
        kernel = _KERNELS.get(key)
        if kernel is None:
            import cupy

            kernel = cupy.ElementwiseKernel("T x", "T y", f"T v = x; {body} y = v;", name)
            _KERNELS[key] = kernel
    return kernel


class DeviceOp:
    """An elementwise op that is one CUDA kernel.

    ``cuda_body`` is C++ that updates a variable ``v`` of the array's type
    ``T`` (float32 or float64); calling the op launches one
    ``cupy.ElementwiseKernel``. ``numpy(x)`` is the same maths on the host,
    for references and CPU benchmarks. Objects are plain Python until called,
    so building them never needs CuPy.
    """

    elementwise = True

    def __init__(self, name: str, cuda_body: str, numpy_fn: Callable):
        self.name = name
        self.__name__ = name
        self.cuda_body = cuda_body
        self._numpy_fn = numpy_fn
        self._kernel = None

    def __call__(self, x):
        kernel = self._kernel
        if kernel is None:
            kernel = self._kernel = _kernel("gg_" + self.name, self.cuda_body)
        return kernel(x)

    def cupy(self, x):
        """The device implementation (what the cupy backend's wrap_op calls)."""
        return self(x)

    def numpy(self, x):
        return self._numpy_fn(x)

    def __repr__(self) -> str:
        return f"DeviceOp({self.name})"


def _add(c: float) -> DeviceOp:
    return DeviceOp("add", f"v = v + (T)({c!r});", lambda x: x + c)


def _mul(c: float) -> DeviceOp:
    return DeviceOp("mul", f"v = v * (T)({c!r});", lambda x: x * c)


def _tanh() -> DeviceOp:
    return DeviceOp("tanh", "v = tanh(v);", np.tanh)


def elementwise_chain(n: int) -> list[DeviceOp]:
    """``n`` small elementwise ops (add 0.25, multiply by 0.75, tanh, ...),
    each one kernel; values stay bounded however long the chain."""
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise ValueError(f"chain length must be a non-negative integer, got {n!r}")
    makers = (lambda: _add(0.25), lambda: _mul(0.75), _tanh)
    return [makers[i % 3]() for i in range(int(n))]


class _HostSyncOp:
    """Reads a value back to the host and uses it: cannot be captured.

    Eagerly it divides ``x`` by ``max(1, max|x|)``, the maximum being read on
    the host. During capture its ``stream.synchronize()`` fails with
    ``cudaErrorStreamCaptureUnsupported`` and invalidates the capture, which is
    what a stray ``.item()`` / ``.get()`` does to a real model.
    """

    elementwise = False
    name = __name__ = "host_sync"

    def __call__(self, x):
        import cupy

        cupy.cuda.get_current_stream().synchronize()  # illegal while capturing
        peak = float(cupy.abs(x).max().get())  # host read: data-dependent
        return x / max(1.0, peak)

    def cupy(self, x):
        return self(x)

    def numpy(self, x):
        peak = float(np.abs(x).max()) if x.size else 0.0
        return x / max(1.0, peak)

    def __repr__(self) -> str:
        return "host_sync_op"


host_sync_op = _HostSyncOp()


class _Fused:
    """Several elementwise ops called in turn, counted as one launch."""

    elementwise = True

    def __init__(self, parts) -> None:
        self.parts = tuple(parts)
        self.__name__ = "fused_" + "_".join(getattr(p, "__name__", "op") for p in self.parts)

    def __call__(self, x):
        for op in self.parts:
            x = op(x)
        return x

    def __repr__(self) -> str:
        return f"fused({', '.join(getattr(p, '__name__', repr(p)) for p in self.parts)})"


def fuse_elementwise(ops):
    """Merge each run of adjacent ops marked ``elementwise = True`` into one
    op (itself marked elementwise); other ops are kept as they are.

    When every op of a run carries a ``cuda_body`` (``DeviceOp``), the merged
    op is a single ``ElementwiseKernel``: real fusion, one launch on the GPU.
    Otherwise the merged op calls the ops in turn (one *counted* launch, as in
    the simulation, though the GPU still runs one kernel per op).
    """
    result: list = []
    run: list = []

    def flush() -> None:
        if not run:
            return
        if len(run) == 1:
            result.append(run[0])
        elif all(isinstance(getattr(op, "cuda_body", None), str) for op in run):
            name = "fused_" + "_".join(getattr(op, "name", "op") for op in run)
            if len(name) > 60:
                digest = hashlib.sha1("|".join(op.cuda_body for op in run).encode()).hexdigest()[:12]
                name = f"fused_{len(run)}_ops_{digest}"
            twins = [op.numpy for op in run if callable(getattr(op, "numpy", None))]
            numpy_fn = _Fused(twins) if len(twins) == len(run) else None
            result.append(DeviceOp(name, " ".join(op.cuda_body for op in run), numpy_fn))
        else:
            result.append(_Fused(run))
        run.clear()

    for op in ops:
        if getattr(op, "elementwise", False):
            run.append(op)
        else:
            flush()
            result.append(op)
    flush()
    return result
