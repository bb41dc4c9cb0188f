"""The engine's arrays: a spec's ``array`` values, built alike in worker and judge, and what the
grader reads of an array it is handed (its data address, its dtype's name, its trailing zero rows)
without consulting anything a submission's subclass or look-alike may override.

A lab's own objects that record arrays (the CUDA-graph lab's ops, in its pack) read them through
these helpers, so that what is trusted of an array is decided here, once.
"""

from __future__ import annotations

import functools

import numpy as np

FLOAT_DTYPES = ("float32", "float64")  # the dtypes a spec's ``array`` value may have


@functools.lru_cache(maxsize=256)  # bounded: a submission's exotic dtypes cannot grow it
def dtype_name(dtype: np.dtype) -> str:
    """``str(dtype)``, remembered: numpy builds the text anew on every call, and the grader names
    the dtype of every array an op is handed, observed and judged."""
    return str(dtype)


def build_array(value) -> np.ndarray:
    """The array a spec's ``array`` value stands for; the same in worker and judge. A new array
    on every call (a case may write into its inputs), copied from one made once per process:
    seeding a generator costs more than the copy."""
    return _built_once(value).copy()


@functools.lru_cache(maxsize=512)
def _built_once(value) -> np.ndarray:
    if value.values is not None:
        built = np.array(value.values, dtype=value.dtype)
    else:
        built = np.random.default_rng(value.seed).standard_normal(value.shape).astype(value.dtype)
    built.flags.writeable = False
    return built


def trailing_zero_rows(x: object) -> int:
    """How many of the last rows (axis 0) of a numpy array are entirely zero; -1 when not known.

    Only numpy arrays are inspected: reading a device array would synchronise with the
    host, which is not allowed while a CUDA graph is being captured."""
    if is_device_array(x) or not isinstance(x, np.ndarray) or x.ndim == 0:
        return -1
    try:
        if x.size and x[-1].any():  # the usual answer, from the last row alone
            return 0
        nonzero = np.flatnonzero(x.reshape(x.shape[0], -1).any(axis=1)) if x.size else np.array([], dtype=np.intp)
    except Exception:  # noqa: BLE001 - an exotic array must not break observing
        return -1
    return int(x.shape[0] - (nonzero[-1] + 1)) if nonzero.size else int(x.shape[0])


def is_device_array(x: object) -> bool:
    """A CuPy array (by its type's module: the CPU stand-in's arrays subclass numpy's). Never in a
    worker (:func:`host_only`): there a type's module is a name any submission can choose."""
    return not _HOST_ONLY and type(x).__module__.split(".")[0] == "cupy"


def data_address(x: object) -> int:
    """Address of an array's first element (views of one buffer share it); -1 if not an array.

    A numpy array's address is read through ``numpy.ndarray``'s own descriptor (taken when this
    module was imported), never through an attribute a subclass or a look-alike may override."""
    try:
        if is_device_array(x):
            return int(x.data.ptr)
        if not isinstance(x, NDARRAY):
            x = ASARRAY(x)
        return int(_INTERFACE(x)["data"][0])
    except Exception:  # noqa: BLE001 - an exotic object from a submission must not break observing
        return -1


# Taken when this module is imported (in a worker: by the zygote, before any submission code),
# so that a submission's patches of numpy or builtins change none of them. ``numpy.ndarray`` is a
# built-in type: its own descriptors cannot be replaced.
NDARRAY = np.ndarray
ASARRAY = np.asarray
_INTERFACE = np.ndarray.__dict__["__array_interface__"].__get__
TYPE = type
_HOST_ONLY = False


def host_only() -> None:
    """In a worker: every array an op is handed is a host array. An op then computes on, and
    records, the plain ``numpy.ndarray`` view of what it is handed (a subclass's Python-level
    attributes, ``__array_interface__`` included, are never consulted), and no object is taken for
    a device array by its type's module name."""
    global _HOST_ONLY
    _HOST_ONLY = True
