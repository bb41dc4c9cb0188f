"""Choose the array backend a reference validation runs on.

``load_backend("numpy")`` gives the CPU simulation (``reference.cudagraph``);
``load_backend("cupy")`` gives real CUDA graphs (``reference.cuda``). Both
expose the student contract's names (``LaunchCounter``, ``run_eager``,
``GraphEntry``, ``GraphRunner``, ``PiecewiseGraphRunner``,
``fuse_elementwise``, ``StepMode``, ``InferenceGraphCapture``) as attributes,
plus adapters around them. ``graphgrade validate --backend`` uses the first two:

- ``prepare_input(np_array)``: where inputs must live (numpy: unchanged;
  cupy: copied to the device);
- ``to_host(value)``: back to numpy for judging (numpy: unchanged);
- ``wrap_op(op)``: for ops that carry their own device kernel, such as
  ``reference.cuda``'s (numpy: unchanged; cupy: a callable that calls
  ``op.cupy(x)``, or ``BackendUnsupported`` if the op has none). The grader's
  own ops need no wrapping: they compute with whichever array module their
  input belongs to.

Loading "numpy" never imports CuPy. Loading "cupy" where it cannot work raises
``BackendUnavailable`` with one line that says why.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from reference import CONTRACT_NAMES  # one list of the contract, in reference/__init__.py

__all__ = [
    "BACKEND_NAMES",
    "CONTRACT_NAMES",
    "Backend",
    "BackendUnavailable",
    "BackendUnsupported",
    "available_backends",
    "load_backend",
]

BACKEND_NAMES: tuple[str, ...] = ("numpy", "cupy")

INSTALL_HINT = "pip install 'graphgrade[cuda]'"


class BackendUnavailable(Exception):
    """The backend asked for is unknown or cannot run here (one-line message)."""


class BackendUnsupported(Exception):
    """The backend cannot run something it was handed (e.g. an op without a
    device implementation); the message names it."""


def _op_name(op: Any) -> str:
    for attr in ("__name__", "name"):
        value = getattr(op, attr, None)
        if isinstance(value, str) and value:
            return value
    return repr(op)


class Backend:
    """A loaded backend: the contract names as attributes, plus adapters."""

    name: str = ""

    def __init__(self, module: Any, description: str) -> None:
        self.module = module
        self.description = description
        # named as the module is, so that the worker's locator (and the line tracer) finds its files
        self.__file__, self.__name__ = getattr(module, "__file__", None), getattr(module, "__name__", "")
        for attr in CONTRACT_NAMES:
            setattr(self, attr, getattr(module, attr))

    def prepare_input(self, array: Any) -> Any:
        raise NotImplementedError

    def to_host(self, value: Any) -> Any:
        raise NotImplementedError

    def wrap_op(self, op: Callable) -> Callable:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.name} backend: {self.description}>"


class NumpyBackend(Backend):
    """The CPU simulation; every adapter is the identity."""

    name = "numpy"

    def __init__(self) -> None:
        super().__init__(importlib.import_module("reference.cudagraph"), "numpy simulation (CPU)")

    def prepare_input(self, array: Any) -> Any:
        return array

    def to_host(self, value: Any) -> Any:
        return value

    def wrap_op(self, op: Callable) -> Callable:
        return op


class _DeviceOp:
    """Runs a grader op's ``.cupy`` implementation; other attributes (such as
    ``elementwise``, ``capturable`` or a witness) are read from the op."""

    def __init__(self, op: Any) -> None:
        self._op = op
        self._impl = op.cupy
        self.__name__ = _op_name(op)

    def __call__(self, x):
        return self._impl(x)

    def __getattr__(self, attr: str) -> Any:
        # Only called for attributes not found on the wrapper itself.
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return getattr(self._op, attr)

    def __repr__(self) -> str:
        return f"<cupy {self._op!r}>"


class CupyBackend(Backend):
    """Real CUDA graphs through CuPy."""

    name = "cupy"

    def __init__(self, cuda_module: Any, device: str) -> None:
        super().__init__(cuda_module, f"CuPy on {device}")
        self.device = device

    def prepare_input(self, array: Any) -> Any:
        return self.module.to_device(array)

    def to_host(self, value: Any) -> Any:
        return self.module.to_host(value)

    def wrap_op(self, op: Callable) -> Callable:
        if callable(getattr(op, "cupy", None)):
            return _DeviceOp(op)
        raise BackendUnsupported(
            f"op {_op_name(op)!r} has no CuPy implementation (no .cupy method); the cupy backend cannot run it"
        )


def _cupy_status(cuda: Any) -> tuple[bool, str]:
    """(True, device name) when the cupy backend can run, else (False, the
    one-line reason)."""
    kind, detail = cuda.probe()
    if kind == "ok":
        return True, detail
    if kind == "missing":
        return False, f"CuPy is not installed: {INSTALL_HINT}"
    if kind == "no-gpu":
        return False, f"no CUDA GPU visible ({detail})"
    return False, detail


def load_backend(name: str) -> Backend:
    """The backend called ``name`` ("numpy" or "cupy").

    Raises ``BackendUnavailable`` (one line) for an unknown name, or for
    "cupy" when CuPy is missing or no CUDA GPU is visible.
    """
    key = name.strip().lower() if isinstance(name, str) else name
    if key == "numpy":
        return NumpyBackend()
    if key == "cupy":
        cuda = importlib.import_module("reference.cuda")
        ok, text = _cupy_status(cuda)
        if not ok:
            raise BackendUnavailable(text)
        return CupyBackend(cuda, text)
    raise BackendUnavailable(f"unknown backend {name!r}: choose one of {', '.join(BACKEND_NAMES)}")


def available_backends() -> dict[str, tuple[bool, str]]:
    """``{name: (usable, description or reason)}`` for every backend; never
    raises."""
    ok, text = _cupy_status(importlib.import_module("reference.cuda"))
    return {
        "numpy": (True, "numpy simulation (CPU)"),
        "cupy": (True, f"CuPy on {text}") if ok else (False, text),
    }
