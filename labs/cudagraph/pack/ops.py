"""The CUDA-graph lab's closed vocabulary of ops a spec may use: the grader's own callables.

The engine knows this module as the lab's op vocabulary (``lab.yaml: ops``, see docs/labs.md and
:mod:`grader.lab.vocabulary`): a spec's ``ops`` values name these kinds, the worker hands their
instances to the submission and the judge's oracle computes with them. It is loaded by path under
the pack's private package name, in a worker before its sandbox closes and before any submission
code runs.

A submission never supplies ops; it receives these. Each op is deterministic,
row-local (row ``i`` of the output depends only on row ``i`` of the input, so
padding a batch cannot change the real rows, as in a real decode step) and
returns a new array of the input's dtype. Each is marked ``elementwise`` (so
fusion passes may merge it) and ``capturable`` (the attention-like op is not,
like attention with a dynamic KV cache in vLLM's piecewise mode).

Every call is written to a :class:`Witness` log: which op, which list it came
from, the data address, shape and dtype of the array it was handed, and how
many of its last rows (along the batch axis) are all zero, and (in the worker) which line of
the submission made the call. That lets a check
see Constraint 2 directly: on replay the first op must be handed the very
buffer it was handed at capture, not the caller's array. And it lets a check
see padding: the rows of a padded buffer beyond the real batch must be zero on
every call, not whatever an earlier, larger batch left there.
"""

from __future__ import annotations

import functools
import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from grader.arrays import ASARRAY, NDARRAY, TYPE, data_address, dtype_name, is_device_array, trailing_zero_rows
from grader.spec_model import OpSpec


def _xp(x):
    """numpy for numpy arrays, cupy for cupy arrays: the ops run on either."""
    if type(x).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy
    return np


def _host_weights(seed: int, n: int, dtype) -> np.ndarray:
    """The seeded n x n weights of ``matmul(seed)``, read-only (made once per process and kind:
    a case calls its matmul on every step, and seeding a generator costs more than the product)."""
    return _host_weights_made(int(seed), int(n), np.dtype(dtype).str)


@functools.lru_cache(maxsize=64)
def _host_weights_made(seed: int, n: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    weights = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(dtype)
    weights.flags.writeable = False
    return weights


# (seed, n, dtype name, device id) -> the weights on that device. Filled by the first
# call of an op outside capture (a graph runner's warm-up run), then only read: a
# captured graph bakes the address in, so an entry is never replaced or freed.
_DEVICE_WEIGHTS: dict[tuple[int, int, str, int], object] = {}
_DEVICE_WEIGHTS_LOCK = threading.Lock()


def _device_weights(cupy, seed: int, n: int, dtype) -> object:
    """The seeded weights on the current device, made once, before any capture.

    Made from the process-wide default memory pool (never a graph's private
    pool, which may be dropped with its graph) and synchronised once, so any
    stream may read them. Making them inside a capture would be a host-to-device
    copy there, which CUDA refuses; so that case says what to do instead.
    """
    key = (int(seed), int(n), np.dtype(dtype).name, int(cupy.cuda.Device().id))
    weights = _DEVICE_WEIGHTS.get(key)
    if weights is not None:
        return weights
    stream = cupy.cuda.get_current_stream()
    if stream.is_capturing():
        raise RuntimeError(
            f"the weights of matmul({seed}) for n={n} {key[2]} are not on the device yet: "
            "run the op once outside capture (a warm-up run) before capturing it"
        )
    with _DEVICE_WEIGHTS_LOCK:
        weights = _DEVICE_WEIGHTS.get(key)
        if weights is None:
            with cupy.cuda.using_allocator(cupy.get_default_memory_pool().malloc):
                weights = cupy.asarray(_host_weights(seed, n, dtype))
            stream.synchronize()  # the copy is done before another stream can read them
            _DEVICE_WEIGHTS[key] = weights
    return weights


def _matmul_seeded(x, seed: int):
    """``x @ W`` over the last axis, W seeded (n x n).

    numpy: ``@``. CuPy: a broadcast product and a sum over the shared axis, which
    are plain CuPy kernels. CuPy's ``@`` calls cuBLAS, and CuPy refuses every
    cuBLAS call while a stream captures (NotImplementedError, CuPy issue 6290),
    so ``@`` would make every graph holding a matmul fall back to eager.
    """
    n = x.shape[-1]
    xp = _xp(x)
    if xp is np:
        return x @ _host_weights(seed, n, x.dtype)
    weights = _device_weights(xp, seed, n, x.dtype)
    return (x[..., :, None] * weights).sum(axis=-2)


def _softmax_rows(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis: device reductions only, no value comes back to the host."""
    shifted = x - x.max(axis=-1, keepdims=True)
    e = _xp(x).exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def _attention_like(x: np.ndarray, seed: int) -> np.ndarray:
    """Each row attends over its own features against seeded keys (row-local)."""
    scores = _softmax_rows(_matmul_seeded(x, seed))
    return (scores * x).astype(x.dtype, copy=False)


@dataclass(frozen=True)
class OpKind:
    name: str
    elementwise: bool
    capturable: bool
    takes: str | None  # "number", "seed" or None
    apply: Callable[..., np.ndarray]
    doc: str


OP_KINDS: dict[str, OpKind] = {
    k.name: k
    for k in (
        OpKind("add", True, True, "number", lambda x, c: x + x.dtype.type(c), "x + c"),
        OpKind("mul", True, True, "number", lambda x, c: x * x.dtype.type(c), "x * c"),
        OpKind("relu", True, True, None, lambda x: _xp(x).maximum(x, x.dtype.type(0)), "max(x, 0)"),
        OpKind("tanh", True, True, None, lambda x: _xp(x).tanh(x), "tanh(x)"),
        OpKind("exp", True, True, None, lambda x: _xp(x).exp(x), "exp(x)"),
        OpKind("sigmoid", True, True, None, lambda x: 1 / (1 + _xp(x).exp(-x)), "1 / (1 + exp(-x))"),
        OpKind("softmax", False, True, None, _softmax_rows, "softmax over the last axis"),
        OpKind("matmul", False, True, "seed", _matmul_seeded, "x @ W, W seeded (n x n)"),
        OpKind(
            "attention", False, False, "seed", _attention_like, "row-local attention over seeded keys (uncapturable)"
        ),
    )
}


def apply_op(spec: OpSpec, x: np.ndarray) -> np.ndarray:
    """The op's value on ``x``: what the oracle computes, with no witness."""
    kind = OP_KINDS[spec.name]
    return kind.apply(x) if spec.param is None else kind.apply(x, spec.param)


def apply_chain(chain: tuple[OpSpec, ...], x: np.ndarray) -> np.ndarray:
    """The numpy oracle: the op chain applied in order to a trusted copy of ``x``."""
    out = np.array(x, copy=True)
    for op in chain:
        out = apply_op(op, out)
    return out


WitnessEntry = tuple[int, int, int, tuple[int, ...], str, int, int]


class Witness:
    """Append-only log of op calls for one case: (list id, position, address, shape, dtype, zero
    rows, call site). ``locator`` (the worker's :class:`grader.observe.locations.Locator`, or
    None) names the submission's line that made each call: its site index, -1 when not known.

    The log is out of the submission's reach by any name: no op it is handed refers to it (an op's
    place and log are looked up in :data:`_PRIVATE` by the op's identity, see :class:`GraderOp`),
    so ``getattr(op, name)`` finds nothing of it, whatever ``name`` is; only code that reaches the
    grader's own modules, frames or the collector could, and the integrity scan flags each of those."""

    def __init__(self, locator=None) -> None:
        self.calls: list[WitnessEntry] = []
        self.locator = locator
        self._ops: list[int] = []  # ids of the ops registered with this log (see close)

    def mark(self) -> int:
        return len(self.calls)

    def since(self, mark: int) -> list[WitnessEntry]:
        return self.calls[mark:]

    def close(self) -> None:
        """Forget this case's ops (their calls stay in the log): a later call of one records nothing."""
        for key in self._ops:
            _PRIVATE.pop(key, None)
        self._ops.clear()


@dataclass(frozen=True)
class _OpPlace:
    """What the grader knows of an op it handed out: kept here, not on the op."""

    op: GraderOp
    witness: Witness
    list_id: int
    position: int
    spec: OpSpec
    kind: OpKind


# id(op) -> its place: the only way from an op to its log. Entries hold the op, so an id is not
# reused while its entry lives; Witness.close drops a case's entries.
_PRIVATE: dict[int, _OpPlace] = {}
# What an op call found changed in its own class (see GraderOp.__call__); guard.py takes it.
_CHANGES_SEEN: list[str] = []


class GraderOp:
    """A callable op handed to a submission; records each call in its case's witness.

    ``spec``, ``list_id``, ``position``, ``elementwise`` and ``capturable`` are the submission's to
    read (and to overwrite: the grader reads none of them back). Each call checks its own class
    first (:func:`class_change`), so a patch of ``GraderOp`` that is in place while the op runs is
    seen even when it is put back before the case ends."""

    __slots__ = ("spec", "list_id", "position", "elementwise", "capturable", "__name__")

    def __init__(self, spec: OpSpec, list_id: int, position: int, witness: Witness) -> None:
        known = _PRIVATE.get(id(self))
        if known is not None and known.op is self:  # GraderOp.__init__(op, ..., another_log)
            raise TypeError("a grader op is made once: it cannot be given another place or log")
        self.spec = spec
        self.list_id = list_id
        self.position = position
        kind = OP_KINDS[spec.name]
        self.elementwise = kind.elementwise
        self.capturable = kind.capturable
        self.__name__ = spec.label
        _PRIVATE[id(self)] = _OpPlace(self, witness, list_id, position, spec, kind)
        witness._ops.append(id(self))

    def __call__(self, x):
        what = class_change()
        if what is not None and what not in _CHANGES_SEEN:
            _CHANGES_SEEN.append(what)
        place = _PRIVATE.get(id(self))
        if place is None or place.op is not self:  # an op of a closed case: computes, records nothing
            return apply_op(self.spec, x)
        if is_device_array(x):
            arr = x
        elif TYPE(x) is NDARRAY:
            arr = x
        else:  # a subclass or a look-alike: the op computes on, and records, the plain array
            arr = ASARRAY(x)
        witness = place.witness
        locator = witness.locator
        witness.calls.append(
            (
                place.list_id,
                place.position,
                data_address(arr),
                tuple(arr.shape),
                dtype_name(arr.dtype),
                trailing_zero_rows(arr),
                locator.site(sys._getframe(1)) if locator is not None else -1,
            )
        )
        kind, param = place.kind, place.spec.param
        return kind.apply(arr) if param is None else kind.apply(arr, param)

    def __repr__(self) -> str:
        return f"<op {self.spec.label}>"


_CLASS_SAVED = tuple((cls, TYPE(cls), tuple(cls.__dict__.items())) for cls in (GraderOp,))
# The functions of the class, with what makes them run as written: a function's code can be
# replaced in place (``type(op).__call__.__code__ = ...``) without changing the class's namespace.
_FUNCTIONS_SAVED = tuple(
    (f"{cls.__name__}.{name}", value, value.__code__, value.__defaults__, value.__kwdefaults__)
    for cls, _, saved in _CLASS_SAVED
    for name, value in saved
    if TYPE(value) is types.FunctionType
)


def class_change() -> str | None:
    """What of ``GraderOp`` (its namespace, metaclass or its functions' code) differs from when
    this module was imported, None if nothing. Cheap enough for every call: a few dozen identity
    comparisons."""
    for name, func, code, defaults, kwdefaults in _FUNCTIONS_SAVED:
        if func.__code__ is not code or func.__defaults__ is not defaults or func.__kwdefaults__ is not kwdefaults:
            return f"{name}'s code"
    for cls, meta, saved in _CLASS_SAVED:
        if TYPE(cls) is not meta:
            return f"{cls.__name__}'s metaclass"
        now = cls.__dict__
        if len(now) != len(saved):
            extra = sorted(now.keys() - {name for name, _ in saved})
            return f"{cls.__name__}.{extra[0] if extra else '?'}"
        for name, value in saved:
            if now.get(name, _CLASS_SAVED) is not value:
                return f"{cls.__name__}.{name}"
    return None


def take_changes_seen() -> str | None:
    """The first class change an op call saw since the last time this was asked (then forgotten)."""
    seen = _CHANGES_SEEN[0] if _CHANGES_SEEN else None
    _CHANGES_SEEN.clear()
    return seen


def case_op_place(op, witness: Witness) -> tuple[int, int] | None:
    """``(list id, position)`` when ``op`` is one of the ops handed out with ``witness`` (a case's
    own op, not a look-alike a submission made or an op of another case), else None. Read from
    the grader's own record, never from the op's attributes."""
    try:
        place = _PRIVATE.get(id(op))
    except Exception:  # noqa: BLE001
        return None
    if place is None or place.op is not op or place.witness is not witness:
        return None
    return place.list_id, place.position


def make_ops(chain: tuple[OpSpec, ...], list_id: int, witness: Witness) -> list[GraderOp]:
    return [GraderOp(spec, list_id, i, witness) for i, spec in enumerate(chain)]


# The classes whose instances a case hands the submission or logs its calls with: the worker's guard
# (grader.run.worker.guard) compares them after every case with what they held when this module
# was loaded, before any submission code ran.
GUARDED = (GraderOp, Witness)
