"""A strict stand-in for CuPy, for CPU tests of graphgrade's CUDA path.

Put ``tests/support/strict_cupy`` first on ``sys.path`` (or ``PYTHONPATH``) and
``import cupy`` gets this package. Arrays are a numpy subclass whose type
lives in module ``cupy``, so code that picks its array module by type (as
``grader/ops.py`` does) really takes its CuPy path. Device work is
submitted to the current stream through ``cupy._device``, which records it
while the stream captures and refuses what CUDA refuses there (see that
module's docstring). In particular, during capture:

- ``cupy.asarray(numpy_array)`` (and ``a[...] = numpy_array``) stage the copy
  through pinned memory and query a captured event: cudaErrorCapturedEvent;
- ``.get()``, ``float()``, ``int()``, ``bool()``, ``.item()``, ``.tolist()``,
  ``repr()``: cudaErrorStreamCaptureUnsupported, capture invalidated;
- ``@``, ``cupy.matmul``, ``dot``, ``einsum``, ``cupy.linalg`` (cuBLAS /
  cuSOLVER) and ``cupy.random`` (cuRAND): NotImplementedError.

As in CuPy, mixing a host ``numpy.ndarray`` into a device operation raises
``TypeError``. ``ElementwiseKernel`` runs the small C subset
``reference/cuda.py`` writes (``T v = x; v = tanh(v); y = v;``);
``RawKernel`` and ``ReductionKernel`` are refused (no CUDA C here).

``cupy.__standin__`` is True, so a script can tell it is not the real CuPy.
"""

from __future__ import annotations

import builtins
import re

import numpy as np

from . import (  # noqa: F401
    _device,
    cuda,  # noqa: F401 - cupy.cuda, as in CuPy
    linalg,
    random,
)

__version__ = "14.2.0+strict-standin"
__standin__ = True

float16, float32, float64 = np.float16, np.float32, np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, bool_, dtype, newaxis, inf, nan = np.uint8, np.bool_, np.dtype, np.newaxis, np.inf, np.nan

_META = {
    np.shape,
    np.ndim,
    np.size,
    np.shares_memory,
    np.may_share_memory,
    np.result_type,
    np.iscomplexobj,
    np.isrealobj,
}
_BLAS_FUNCS = {np.matmul, np.dot, np.vdot, np.inner, np.tensordot, np.einsum, np.kron}


def _is_basic_key(key) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return builtins.all(
        k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice)) and not isinstance(k, bool) for k in keys
    )


def _raw(a: ndarray) -> np.ndarray:
    """A plain view of a device array's memory that does not keep its allocation
    alive: a recorded node holds raw addresses, as a CUDA graph does. If the
    array dies, its block goes back to the pool and may be handed out again."""
    mem = getattr(a, "_mem", None)
    if mem is None or builtins.any(s < 0 for s in a.strides):
        return a.view(np.ndarray)
    base = mem.mem.buffer
    offset = int(a.__array_interface__["data"][0]) - mem.mem.ptr
    return np.ndarray(a.shape, a.dtype, buffer=base, offset=offset, strides=a.strides)


def _device_arg(value):
    """A device array becomes a raw view of its memory (read when the node runs);
    a host ndarray is refused, as CuPy refuses it."""
    if isinstance(value, ndarray):
        return _raw(value)
    if isinstance(value, np.ndarray):
        raise TypeError(f"Unsupported type {type(value)}")
    if isinstance(value, (list, tuple)):
        return type(value)(_device_arg(v) for v in value)
    if isinstance(value, dict):
        return {k: _device_arg(v) for k, v in value.items()}
    return value


def _launch(compute, args=(), kwargs=None, out=None):
    """Run ``compute(*args)`` as one kernel on the current stream, into new device
    arrays (or ``out``). While the stream captures, the outputs are allocated
    now (garbage) and filled only when the graph runs."""
    kwargs = kwargs or {}
    with np.errstate(all="ignore"):
        first = compute(*args, **kwargs)  # while capturing: only its shapes and dtypes are used
    single = not isinstance(first, tuple)
    if out is None:
        outs = tuple(_empty(np.shape(r), np.result_type(r)) for r in ((first,) if single else first))
    else:
        outs = out if isinstance(out, tuple) else (out,)
    bases = [_raw(o) for o in outs]
    capturing = _device.get_current_stream()._capture is not None

    def node() -> None:
        if capturing:
            with np.errstate(all="ignore"):
                values = compute(*args, **kwargs)
        else:
            values = first
        for base, value in zip(bases, (values,) if single else values):
            np.copyto(base, value, casting="unsafe")

    _device.submit(node)
    return outs[0] if single else outs


class ndarray(np.ndarray):
    """A device array: its memory comes from the current CuPy allocator."""

    def __new__(cls, shape, dtype=float, memptr=None, strides=None, order="C"):
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        mem = memptr if memptr is not None else _device.alloc(nbytes)
        buffer = mem.mem.buffer[mem.ptr - mem.mem.ptr :]
        arr = np.ndarray.__new__(cls, shape, dtype, buffer=buffer, strides=strides, order=order)
        arr._mem = mem
        return arr

    def __array_finalize__(self, obj) -> None:
        self._mem = getattr(obj, "_mem", None)

    # -- device work -------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if ufunc is np.matmul:
            _device.library_call("cuBLAS")
        args = [_device_arg(a) for a in inputs]
        if out is not None:
            for o in out:
                if not isinstance(o, ndarray):
                    raise TypeError(f"Unsupported type {type(o)}")
        return _launch(getattr(ufunc, method), args, kwargs, out)

    def __array_function__(self, func, types, args, kwargs):
        if func in _META:
            return super().__array_function__(func, types, args, kwargs)
        if func in _BLAS_FUNCS or getattr(func, "__module__", "").startswith("numpy.linalg"):
            _device.library_call("cuBLAS")
        return _launch(func, _device_arg(args), _device_arg(kwargs))

    def __getitem__(self, key):
        if _is_basic_key(key):
            keys = key if isinstance(key, tuple) else (key,)
            if Ellipsis not in keys:
                keys = keys + (Ellipsis,)  # x[0, 0] is a 0-d device array, never a host scalar
            return super().__getitem__(keys)  # a view: no device work
        keys = key if isinstance(key, tuple) else (key,)
        if builtins.any(isinstance(k, np.ndarray) and k.dtype == bool for k in keys):
            _device.host_read_check()  # a boolean mask needs the count on the host
        return _launch(lambda a, k: a[k], (_raw(self), _device_arg(key)))

    def __setitem__(self, key, value) -> None:
        if isinstance(value, np.ndarray) and not isinstance(value, ndarray):
            value = asarray(value)  # host -> device, as CuPy does
        source = _device_arg(value)
        target = _raw(self)
        key = _device_arg(key)
        _device.submit(lambda: target.__setitem__(key, source))

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def fill(self, value) -> None:
        target = _raw(self)
        _device.submit(lambda: target.fill(value))

    def copy(self, order="C"):
        return _launch(lambda a: a.copy(order=order), (_raw(self),))

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        return _launch(lambda a: a.astype(dtype, order=order), (_raw(self),))

    def reshape(self, *shape, order="C"):
        view = super().reshape(*shape, order=order)
        if np.shares_memory(view, self) or view.size == 0:
            return view
        return _launch(lambda a: a.reshape(*shape, order=order), (_raw(self),))

    def ravel(self, order="C"):
        return self.reshape(-1, order=order)

    def flatten(self, order="C"):
        return self.copy(order).reshape(-1)

    def dot(self, other, out=None):
        _device.library_call("cuBLAS")
        return _launch(np.dot, (_raw(self), _device_arg(other)), out=out)

    def argmax(self, axis=None, out=None, **kw):
        return _launch(lambda a: np.argmax(a, axis=axis, **kw), (_raw(self),), out=out)

    def argmin(self, axis=None, out=None, **kw):
        return _launch(lambda a: np.argmin(a, axis=axis, **kw), (_raw(self),), out=out)

    # -- device -> host ------------------------------------------------
    def get(self, stream=None, order="C", out=None, blocking=True):
        _device.forbid_sync(stream if stream is not None else _device.get_current_stream())
        host = np.array(_raw(self), copy=True, order=order)
        if out is not None:
            out[...] = host
            return out
        return host

    def _host(self):
        return self.get()

    def item(self, *args):
        return self._host().item(*args)

    def tolist(self):
        return self._host().tolist()

    def tobytes(self, order="C"):
        return self._host().tobytes(order)

    def __float__(self):
        return float(self._host())

    def __int__(self):
        return int(self._host())

    def __index__(self):
        return self._host().__index__()

    def __bool__(self):
        return bool(self._host())

    def __complex__(self):
        return complex(self._host())

    def __repr__(self):
        return repr(self._host()).replace("array(", "array(", 1)

    def __str__(self):
        return str(self._host())

    def __reduce__(self):
        raise TypeError("a device array cannot be pickled by the stand-in; call .get() first")

    @property
    def data(self):
        """A ``MemoryPointer`` (``.ptr``: the address of the first element), as in CuPy."""
        return _device.MemoryPointer(self._mem.mem, int(self.__array_interface__["data"][0]) - self._mem.mem.ptr)

    @property
    def device(self):
        return _device.Device(0)


ndarray.__module__ = "cupy"
ndarray.__qualname__ = ndarray.__name__ = "ndarray"


def _empty(shape, dtype=float, order="C"):
    return ndarray(shape, dtype=dtype, order=order)


# ---------------------------------------------------------------- creation
def empty(shape, dtype=float, order="C"):
    return _empty(shape, dtype, order)


def empty_like(a, dtype=None, order="K", shape=None):
    return _empty(a.shape if shape is None else shape, a.dtype if dtype is None else dtype)


def full(shape, fill_value, dtype=None, order="C"):
    out = _empty(shape, np.result_type(fill_value) if dtype is None else dtype, order)
    out.fill(fill_value)
    return out


def zeros(shape, dtype=float, order="C"):
    return full(shape, 0, dtype, order)


def ones(shape, dtype=float, order="C"):
    return full(shape, 1, dtype, order)


def zeros_like(a, dtype=None, order="K", shape=None):
    return full(a.shape if shape is None else shape, 0, a.dtype if dtype is None else dtype)


def ones_like(a, dtype=None, order="K", shape=None):
    return full(a.shape if shape is None else shape, 1, a.dtype if dtype is None else dtype)


def full_like(a, fill_value, dtype=None, order="K", shape=None):
    return full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None else dtype)


def arange(*args, dtype=None):
    return _launch(lambda: np.arange(*args, dtype=dtype))


def asarray(a, dtype=None, order=None, *, blocking=False):
    """Device arrays pass through; host data is copied to the device through a
    pinned staging buffer, then the staging buffer is put on CuPy's event
    watch list (an event query: illegal while the stream captures)."""
    if isinstance(a, ndarray):
        return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
    host = np.asarray(a, dtype=dtype, order=order)
    if host.dtype.char not in "?bhilqBHILQefdFD":
        raise ValueError(f"Unsupported dtype {host.dtype}")
    out = _empty(host.shape, host.dtype)
    if host.ndim == 0:
        out.fill(host[()])
        return out
    staging = _device._pinned_pool.take(host.nbytes)
    source = staging.buffer[: host.nbytes].view(host.dtype).reshape(host.shape)
    source[...] = host
    target = _raw(out)
    _device.submit(lambda: np.copyto(target, source))  # the memcpy node reads the raw staging buffer
    stream = _device.get_current_stream()
    _device.add_to_watch_list(stream.record(), staging)
    if blocking:
        stream.synchronize()
    return out


def array(obj, dtype=None, copy=True, order="K", ndmin=0, *, blocking=False):
    if isinstance(obj, ndarray):
        return obj.astype(dtype or obj.dtype, copy=copy)
    return asarray(np.array(obj, dtype=dtype, ndmin=ndmin), blocking=blocking)


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    if isinstance(a, ndarray):
        return a.get(stream=stream, order=order, out=out)
    return np.asarray(a, order=order)


def get_array_module(*args):
    return __import__("cupy") if builtins.any(isinstance(a, ndarray) for a in args) else np


def get_default_memory_pool():
    return _device._default_pool


def get_default_pinned_memory_pool():
    return _device._pinned_pool


# ---------------------------------------------------------------- math
def _device_func(np_func, library=None):
    def func(*args, **kwargs):
        if library:
            _device.library_call(library)
        return _launch(np_func, _device_arg(args), _device_arg(kwargs))

    func.__name__ = np_func.__name__
    return func


_names = (
    "exp",
    "log",
    "tanh",
    "sin",
    "cos",
    "sqrt",
    "abs",
    "absolute",
    "negative",
    "maximum",
    "minimum",
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "power",
    "where",
    "clip",
    "sum",
    "max",
    "min",
    "amax",
    "amin",
    "mean",
    "prod",
    "square",
    "isnan",
    "isfinite",
    "all",
    "any",
    "concatenate",
    "stack",
    "expand_dims",
    "squeeze",
    "transpose",
    "broadcast_to",
    "sign",
    "argmax",
    "argmin",
    "reshape",
    "ravel",
    "cumsum",
)
for _name in _names:
    globals()[_name] = _device_func(getattr(np, _name))
for _name in ("matmul", "dot", "einsum", "tensordot", "inner", "vdot"):
    globals()[_name] = _device_func(getattr(np, _name), library="cuBLAS")


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _launch(lambda x, y: np.array(np.allclose(x, y, rtol, atol, equal_nan)), _device_arg((a, b)))


# ---------------------------------------------------------------- kernels
_TOKEN = re.compile(
    r"\s*(?:(\d+\.\d*(?:[eE][-+]?\d+)?[fF]?|\d+(?:[eE][-+]?\d+)?[fF]?)|([A-Za-z_]\w*)|([-+*/(),<>=?:!]))"
)
_C_FUNCS = {
    "tanh": np.tanh,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "fabs": np.abs,
    "abs": np.abs,
    "max": np.maximum,
    "min": np.minimum,
    "fmax": np.fmax,
    "fmin": np.fmin,
    "sin": np.sin,
    "cos": np.cos,
}
_CASTS = ("(T)", "(float)", "(double)")


def _c_expression(text: str, names) -> str:
    """The C expression ``text`` as Python, or NotImplementedError outside the small subset."""
    for cast in _CASTS:
        text = text.replace(cast, "")
    out, pos = [], 0
    while pos < len(text.rstrip()):
        match = _TOKEN.match(text, pos)
        if not match:
            raise NotImplementedError(f"the stand-in ElementwiseKernel cannot parse {text!r}")
        number, name, op = match.groups()
        if number:
            out.append(number.rstrip("fF"))
        elif name:
            if name not in names and name not in _C_FUNCS:
                raise NotImplementedError(f"the stand-in ElementwiseKernel does not know {name!r}")
            out.append(name)
        else:
            if op in "<>=?:!":
                raise NotImplementedError(f"the stand-in ElementwiseKernel does not support {op!r}")
            out.append(op)
        pos = match.end()
    return " ".join(out)


class ElementwiseKernel:
    """``cupy.ElementwiseKernel(in_params, out_params, operation, name)`` for the
    C subset: statements ``[T] name = expression;`` over + - * / and tanh, exp, ..."""

    def __init__(self, in_params, out_params, operation, name="kernel", **kwargs) -> None:
        self.name = name
        self.inputs = [p.split()[-1] for p in in_params.split(",") if p.strip()]
        self.outputs = [p.split()[-1] for p in out_params.split(",") if p.strip()]
        known = set(self.inputs) | set(self.outputs)
        self.program = []
        for statement in operation.split(";"):
            statement = statement.strip()
            if not statement:
                continue
            target, _, expr = statement.partition("=")
            target = target.split()[-1]
            known.add(target)
            self.program.append((target, compile(_c_expression(expr, known), name, "eval")))

    def __call__(self, *args, size=None, stream=None):
        n_in = len(self.inputs)
        ins, outs = args[:n_in], args[n_in:]
        dtype = next((a.dtype for a in ins if isinstance(a, np.ndarray)), np.dtype(np.float64))
        program, inputs, outputs = self.program, self.inputs, self.outputs

        def compute(*values):
            env = dict(_C_FUNCS)
            env.update(
                {
                    k: (np.asarray(v).astype(dtype) if not isinstance(v, np.ndarray) else v)
                    for k, v in zip(inputs, values)
                }
            )
            for target, code in program:
                env[target] = np.asarray(eval(code, {"__builtins__": {}}, env)).astype(dtype, copy=False)
            results = tuple(
                np.broadcast_to(env[o], np.broadcast_shapes(*(np.shape(v) for v in values))).copy() for o in outputs
            )
            return results[0] if len(results) == 1 else results

        return _launch(compute, _device_arg(tuple(ins)), out=tuple(outs) if outs else None)


class RawKernel:
    def __init__(self, *args, **kwargs) -> None:
        raise NotImplementedError("the strict CuPy stand-in cannot run CUDA C (RawKernel)")


class ReductionKernel(RawKernel):
    pass


RawModule = RawKernel
