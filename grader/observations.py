"""A case's observations: encoded by the worker, validated and decoded by the grader.

The worker sends them as one observation frame (:mod:`grader.framing` owns its bytes and its
record's field names): a JSON header plus raw array bytes. Values travel as tagged JSON;
arrays as (dtype, shape, bytes), rebuilt as plain ``numpy.ndarray`` of exactly that dtype and
shape on the grader side.

Nothing is pickled or evaluated. Every size is bounded and every field is
validated by :func:`decode_observations`; anything malformed raises
:class:`ProtocolError`, which the grader turns into an error verdict for that
case alone.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader import snapshots, trace_facts, validation
from grader.arrays import dtype_name
from grader.framing import (
    ERROR_FIELDS,
    MAX_BLOB_BYTES,
    MAX_BLOBS,
    MAX_BUMPS,
    MAX_FRAME_TEXT,
    MAX_ORIGIN_FRAMES,
    MAX_SITE_FRAMES,
    MAX_SITES,
    MAX_TEXT,
    MAX_TRACE_FRAMES,
    OBSERVATION_FIELDS,
    OBSERVATION_V2_STEP_FIELDS,
    OBSERVATION_V3_STEP_FIELDS,
    OBSERVATION_V4_STEP_FIELDS,
    OBSERVATION_VERSION,
    ORIGIN_FIELD,
    ORIGIN_KINDS,
    ORIGIN_OP,
    READABLE_OBSERVATIONS,
    STEP_FIELDS,
    ProtocolError,
    observation_frame,
    observation_parts,
)
from grader.lab import active as active_lab
from grader.lab.interface import Snapshot
from grader.safetext import safe_text
from grader.snapshots import EntryObservation

MAX_LIST = 64
LOOSE_HEADER_BYTES = 64 << 10  # a larger header must be about as long as its content written out
MAX_DEPTH = 4
MAX_STEPS = 256
MAX_WITNESS = 256
MAX_PROVIDED = 16  # provided objects whose calls a step reports
MAX_CALL_ITEMS = 8  # a provided object's call: its method and arguments
MAX_ELEMENTS = MAX_BLOB_BYTES  # elements of one array (a bool array of the largest blob)
ARRAY_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
)
OUTCOMES = ("returned", "raised", "missing", "not_reached")
_STEP_KEYS = frozenset(STEP_FIELDS)
_ERROR_KEYS = frozenset(ERROR_FIELDS)
_STEP_KEYS_V3 = _STEP_KEYS - OBSERVATION_V4_STEP_FIELDS  # what a frame of version 3 may hold
_STEP_KEYS_V2 = _STEP_KEYS_V3 - OBSERVATION_V3_STEP_FIELDS  # what a frame of version 2 may hold
_STEP_KEYS_V1 = _STEP_KEYS_V2 - OBSERVATION_V2_STEP_FIELDS  # what a frame of version 1 may hold
_ERROR_KEYS_V1 = _ERROR_KEYS - {"frames"}
_ARRAY_KEYS = frozenset({"dtype", "shape", "blob"})


# ================================================================ observations (decoded form)
@dataclass(frozen=True)
class EnumValue:
    type: str
    name: str


@dataclass(frozen=True)
class OpaqueValue:
    """An object the worker could only describe by its type name."""

    type: str


@dataclass(frozen=True)
class SourceFrame:
    """One frame in the submission's own files: the file (relative to the submission), the line,
    the function and that line's source text."""

    file: str
    line: int
    function: str
    source: str


@dataclass(frozen=True)
class Bump:
    """One call of the ``bump`` of the submission's launch counter (lab.yaml: launch_counter): the
    amount (-1: not an int) and its call site (an index into the step's ``sites``, -1: not known)."""

    amount: int
    site: int


@dataclass(frozen=True)
class ProvidedCall:
    """A call on an object the lab provides: its log's items (text, integers) and site (-1: unknown)."""

    items: tuple[str | int, ...]
    site: int


@dataclass(frozen=True)
class Raised:
    type: str
    message: str
    frames: tuple[SourceFrame, ...] = ()  # the submission's frames of the traceback, outermost first


@dataclass(frozen=True)
class WitnessCall:
    list_id: int
    position: int
    address: int
    shape: tuple[int, ...]
    dtype: str
    zero_rows: int = -1  # trailing all-zero rows of the array the op was handed; -1: not known
    site: int = -1  # the call's site (an index into the step's ``sites``); -1: not known


@dataclass(frozen=True)
class ListedOp:
    """One entry of a list of ops a step returned: one of the case's own ops (its list and
    position), or a new callable; and whether it is marked ``elementwise``."""

    given: bool
    list_id: int
    position: int
    elementwise: bool


@dataclass(frozen=True)
class Origin:
    """A line of the submission a step's value came from: ``kind`` is ``returned`` (the return
    that ended the function the step called), ``returned-plain`` (one handing back a constant or
    a name), ``tested`` (the last if/while test that function ran), ``assigned`` (the last
    assignment of the attribute the step read), and the others grader.observe.origins notes
    (``op:N``: the last test run while a name held op N of the list the step was handed)."""

    kind: str
    frame: SourceFrame
    # the value made there, as plain data (``compared``, ``looked-up``, ``operand``: None, an int
    # or a tuple of ints), when the worker noted one (``valued``)
    value: int | tuple[int, ...] | None = None
    valued: bool = False


@dataclass(frozen=True)
class StepObservation:
    index: int
    outcome: str  # returned | raised | missing | not_reached
    value: Any = None
    error: Raised | None = None
    launches: int | None = None
    witness: tuple[WitnessCall, ...] = ()
    input_address: int | None = None
    graphs: tuple[EntryObservation, ...] | None = None  # the snapshot of the step's object, if taken
    ops: tuple[ListedOp, ...] | None = None  # the op list the step returned (an entry point that binds ops)
    note: str = ""  # why a step was missing / not reached
    sites: tuple[tuple[SourceFrame, ...], ...] = ()  # the submission's call sites, innermost frame first
    bumps: tuple[Bump, ...] = ()  # the launch counter's bump calls of this step
    origin: tuple[Origin, ...] = ()  # where the step's value came from (grader.observe.origins)
    calls: tuple[tuple[str, tuple[ProvidedCall, ...]], ...] = ()  # per provided object (its name): its calls
    trace: trace_facts.Trace | None = None  # a probe step's line trace

    def site(self, index: int) -> tuple[SourceFrame, ...]:
        """The frames of one of this step's call sites; () for -1 or an index out of range."""
        return self.sites[index] if 0 <= index < len(self.sites) else ()


@dataclass(frozen=True)
class CaseObservation:
    case: str
    steps: tuple[StepObservation, ...]


# ================================================================ worker side: encode
class _Encoder:
    def __init__(self) -> None:
        self.blobs: list[bytes] = []
        self.size = 0

    def array(self, value: Any) -> dict:
        arr = np.array(value, copy=True, subok=False)
        if arr.dtype.byteorder not in ("=", "|"):  # a byte-swapped array still travels as its values
            arr = arr.astype(arr.dtype.newbyteorder("="))
        dtype = dtype_name(arr.dtype)
        if dtype not in ARRAY_DTYPES:
            return {"object": {"type": f"ndarray[{dtype[:40]}]"}}
        if math.prod(max(d, 1) for d in arr.shape) > MAX_ELEMENTS:  # what the grader would refuse
            return {"object": {"type": f"ndarray too large to report (shape {list(arr.shape)[:8]})"}}
        raw = np.ascontiguousarray(arr).tobytes()
        if self.size + len(raw) > MAX_BLOB_BYTES or len(self.blobs) >= MAX_BLOBS:
            return {"object": {"type": f"ndarray too large to report ({arr.size} elements)"}}
        self.blobs.append(raw)
        self.size += len(raw)
        return {"ndarray": {"dtype": dtype, "shape": list(arr.shape), "blob": len(self.blobs) - 1}}

    def value(self, value: Any, depth: int = 0) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, enum.Enum):
            return {"enum": {"type": shorten(type(value).__name__), "name": shorten(str(value.name))}}
        if isinstance(value, np.generic) and not isinstance(value, np.ndarray):
            return self.value(value.item(), depth)
        if isinstance(value, int):
            return value if -(2**63) <= value < 2**63 else {"object": {"type": "int out of range"}}
        if isinstance(value, float):
            return value if math.isfinite(value) else {"float": repr(value)}
        if isinstance(value, str):
            return {"str": shorten(value)}
        if isinstance(value, np.ndarray) or hasattr(value, "__array_interface__"):
            return self.array(value)
        if isinstance(value, (list, tuple)) and depth < MAX_DEPTH:
            return {"list": [self.value(v, depth + 1) for v in list(value)[:MAX_LIST]]}
        return {"object": {"type": shorten(type(value).__name__)}}


def shorten(text: str) -> str:
    """``text`` cut to MAX_TEXT characters, the cut marked: names and messages a worker sends stay small."""
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def encode_observations(uid: str, steps: list[dict], encoder_blobs: list[bytes]) -> bytes:
    """The observation frame of a case's step records (:meth:`grader.framing.StepRecord.wire`)."""
    return observation_frame(uid, steps, encoder_blobs)


new_encoder = _Encoder


# ================================================================ grader side: decode and validate
def _origin_value(raw: Any, where: str) -> int | tuple[int, ...] | None:
    """An origin's plain value: "None", an int, or a list of at most 8 ints (a tuple)."""
    if raw == "None":
        return None
    if isinstance(raw, list) and len(raw) <= 8:
        return tuple(_int(v, where, -(2**62), 2**62) for v in raw)
    return _int(raw, where, -(2**62), 2**62)


def _op_kind(kind: str) -> bool:
    """Whether ``kind`` is ``op:<N>`` with N a position an op list may hold."""
    digits = kind[len(ORIGIN_OP) :] if kind.startswith(ORIGIN_OP) else ""
    return 0 < len(digits) <= 3 and digits.isascii() and digits.isdigit() and int(digits) < MAX_WITNESS


def _fail(where: str, message: str) -> ProtocolError:
    return ProtocolError(message, where)


_int = validation.integer


def _text(obj: Any, where: str) -> str:
    """Every string a worker sends enters the grader here, and leaves it safe (grader.safetext)."""
    return safe_text(validation.text(obj, where, MAX_TEXT))


def _shape(obj: Any, where: str) -> tuple[int, ...]:
    return validation.array_shape(obj, where, MAX_ELEMENTS)


_keys = validation.keys_within


def _witness_fast(w: Any) -> WitnessCall | None:
    """A witness entry that passes every check of the general path below (same bounds), decoded
    without its per-field calls; None for anything else, which the general path then decodes or
    refuses with its precise message. Most of an observation frame is witness entries."""
    if type(w) is not list or len(w) not in (5, 6, 7):
        return None
    list_id, position, address, shape, dtype = w[0], w[1], w[2], w[3], w[4]
    zero_rows = w[5] if len(w) >= 6 else -1
    site = w[6] if len(w) == 7 else -1
    if not (
        type(site) is int
        and -1 <= site < MAX_SITES
        and type(list_id) is int
        and type(position) is int
        and type(address) is int
        and type(zero_rows) is int
        and 0 <= list_id < 1 << 16
        and 0 <= position < 1 << 16
        and -(2**63) <= address < 2**64
        and -1 <= zero_rows < 1 << 40
        and type(dtype) is str
        and type(shape) is list
        and len(shape) <= 8
    ):
        return None
    elements = 1
    for d in shape:
        if type(d) is not int or not 0 <= d < 1 << 31:
            return None
        elements *= d or 1
    if elements > MAX_ELEMENTS:
        return None
    text = _SHORT_TEXTS.get(dtype)
    if text is None:
        if len(dtype) > MAX_TEXT:
            return None
        text = safe_text(dtype)
        if len(dtype) <= 32 and len(_SHORT_TEXTS) < 1024:
            _SHORT_TEXTS[dtype] = text
    return WitnessCall(list_id, position, address, tuple(shape), text, zero_rows, site)


_SHORT_TEXTS: dict[str, str] = {}  # safe_text of the short strings frames repeat (dtype names)


class _Decoder:
    def __init__(self, blobs: list[bytes], version: int = OBSERVATION_VERSION) -> None:
        self.blobs = blobs
        self.used: set[int] = set()
        self.version = version
        self.snapshot: Snapshot | None = active_lab().snapshot
        fields = self.snapshot.fields if self.snapshot is not None else ()
        self.origin_kinds = frozenset(ORIGIN_KINDS) | {ORIGIN_FIELD + f.name for f in fields}

    def frames(self, raw: Any, where: str, limit: int) -> tuple[SourceFrame, ...]:
        validation.bounded_list(raw, where, limit)
        found = []
        for i, f in enumerate(raw):
            at = f"{where}[{i}]"
            if not isinstance(f, list) or len(f) != 4:
                raise _fail(at, "expected [file, line, function, source]")
            found.append(
                SourceFrame(
                    safe_text(validation.text(f[0], at, MAX_FRAME_TEXT)),
                    _int(f[1], at, 0, 1 << 31),
                    safe_text(validation.text(f[2], at, MAX_FRAME_TEXT)),
                    safe_text(validation.text(f[3], at, MAX_FRAME_TEXT)),
                )
            )
        return tuple(found)

    def origin(self, raw: Any, where: str) -> tuple[Origin, ...]:
        if raw is None:
            return ()
        validation.bounded_list(raw, where, MAX_ORIGIN_FRAMES)
        found = []
        for i, entry in enumerate(raw):
            at = f"{where}[{i}]"
            if not isinstance(entry, list) or len(entry) not in (5, 6) or not isinstance(entry[0], str):
                raise _fail(at, "expected [kind, file, line, function, source] and an optional plain value")
            if entry[0] not in self.origin_kinds and not _op_kind(entry[0]):
                raise _fail(at, f"an origin's kind is one of {sorted(self.origin_kinds)} or {ORIGIN_OP}<N>")
            (frame,) = self.frames([entry[1:5]], at, 1)
            if len(entry) == 6:
                found.append(Origin(entry[0], frame, _origin_value(entry[5], f"{at}[5]"), True))
            else:
                found.append(Origin(entry[0], frame))
        return tuple(found)

    def sites(self, raw: Any, where: str) -> tuple[tuple[SourceFrame, ...], ...]:
        if raw is None:
            return ()
        validation.bounded_list(raw, where, MAX_SITES)
        return tuple(self.frames(site, f"{where}[{i}]", MAX_SITE_FRAMES) for i, site in enumerate(raw))

    def bumps(self, raw: Any, where: str, sites: int) -> tuple[Bump, ...]:
        if raw is None:
            return ()
        validation.bounded_list(raw, where, MAX_BUMPS)
        found = []
        for i, b in enumerate(raw):
            if not isinstance(b, list) or len(b) != 2:
                raise _fail(f"{where}[{i}]", "expected [amount, site]")
            found.append(Bump(_int(b[0], where, -1, 1 << 62), _int(b[1], where, -1, sites)))
        return tuple(found)

    def calls(self, raw: Any, where: str, sites: int) -> tuple[tuple[str, tuple[ProvidedCall, ...]], ...]:
        if raw is None:
            return ()
        if not isinstance(raw, dict) or len(raw) > MAX_PROVIDED:
            raise _fail(where, f"expected a mapping of at most {MAX_PROVIDED} names")
        found = []
        for name, entries in raw.items():
            calls = []
            for i, entry in enumerate(validation.bounded_list(entries, at := f"{where}.{str(name)[:40]}", MAX_WITNESS)):
                if not isinstance(entry, list) or not 2 <= len(entry) <= MAX_CALL_ITEMS + 1:
                    raise _fail(f"{at}[{i}]", "expected [method, arguments..., site]")
                items = (_text(v, at) if isinstance(v, str) else _int(v, at, -(1 << 62), 1 << 62) for v in entry[:-1])
                calls.append(ProvidedCall(tuple(items), _int(entry[-1], f"{at}[{i}]", -1, sites)))
            found.append((_text(name, where), tuple(calls)))
        return tuple(found)

    def array(self, obj: Any, where: str) -> np.ndarray:
        obj = _keys(obj, _ARRAY_KEYS, where)
        dtype = obj.get("dtype")
        if dtype not in ARRAY_DTYPES:
            raise _fail(where, f"unsupported dtype {dtype!r}")
        shape = _shape(obj.get("shape"), f"{where}.shape")
        index = _int(obj.get("blob"), f"{where}.blob", 0, len(self.blobs))
        if index in self.used:
            raise _fail(where, "blob used twice")
        self.used.add(index)
        raw = self.blobs[index]
        expected = math.prod(shape) * np.dtype(dtype).itemsize
        if len(raw) != expected:
            raise _fail(where, f"{len(raw)} bytes do not make a {dtype} array of shape {list(shape)}")
        # A plain ndarray of exactly this dtype and shape, owning its memory: no
        # subclass, no custom __eq__, nothing of the submission's survives.
        try:
            return np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape).copy()
        except (ValueError, TypeError, MemoryError) as exc:
            raise _fail(
                where, f"cannot rebuild a {dtype} array of shape {list(shape)} ({type(exc).__name__})"
            ) from None

    def listed_ops(self, raw: Any, where: str) -> tuple[ListedOp, ...] | None:
        if raw is None:
            return None
        validation.bounded_list(raw, where, MAX_WITNESS)
        found = []
        for i, entry in enumerate(raw):
            if (
                not isinstance(entry, list)
                or len(entry) != 4
                or not isinstance(entry[0], bool)
                or not isinstance(entry[3], bool)
            ):
                raise _fail(f"{where}[{i}]", "expected [given, list, position, elementwise]")
            found.append(
                ListedOp(entry[0], _int(entry[1], where, -1, 1 << 16), _int(entry[2], where, -1, 1 << 16), entry[3])
            )
        return tuple(found)

    def value(self, obj: Any, where: str, depth: int = 0) -> Any:
        if obj is None or isinstance(obj, bool):
            return obj
        if isinstance(obj, int):
            return _int(obj, where)
        if isinstance(obj, float):
            if not math.isfinite(obj):
                raise _fail(where, "non-finite float outside its tag")
            return obj
        if not isinstance(obj, dict) or len(obj) != 1:
            raise _fail(where, "expected a tagged value")
        ((tag, body),) = obj.items()
        if tag == "str":
            return _text(body, where)
        if tag == "float":
            if body not in ("nan", "inf", "-inf"):
                raise _fail(where, "bad float tag")
            return float(body)
        if tag == "ndarray":
            return self.array(body, where)
        if tag == "enum":
            body = _keys(body, {"type", "name"}, where)
            return EnumValue(_text(body.get("type"), where), _text(body.get("name"), where))
        if tag == "object":
            body = _keys(body, {"type"}, where)
            return OpaqueValue(_text(body.get("type"), where))
        if tag == "list":
            if not isinstance(body, list) or len(body) > MAX_LIST or depth >= MAX_DEPTH:
                raise _fail(where, "list too long or too deep")
            return tuple(self.value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(body))
        raise _fail(where, f"unknown value tag {tag!r}")

    def step(self, obj: Any, where: str) -> StepObservation:
        allowed = (_STEP_KEYS_V1, _STEP_KEYS_V1, _STEP_KEYS_V2, _STEP_KEYS_V3)
        obj = _keys(obj, allowed[self.version] if self.version < 4 else _STEP_KEYS, where)
        outcome = obj.get("outcome")
        if outcome not in OUTCOMES:
            raise _fail(f"{where}.outcome", f"expected one of {OUTCOMES}")
        error = None
        if obj.get("error") is not None:
            e = _keys(obj["error"], _ERROR_KEYS if self.version >= 2 else _ERROR_KEYS_V1, f"{where}.error")
            error = Raised(
                _text(e.get("type"), f"{where}.error.type"),
                _text(e.get("message"), f"{where}.error.message"),
                self.frames(e.get("frames", []), f"{where}.error.frames", MAX_TRACE_FRAMES),
            )
        launches = obj.get("launches")
        witness_raw = validation.bounded_list(obj.get("witness", []), f"{where}.witness", MAX_WITNESS)
        witness = []
        lengths = (5, 6, 7) if self.version >= 2 else (5, 6)
        for i, w in enumerate(witness_raw):
            fast = _witness_fast(w) if self.version >= 2 or len(w) < 7 else None  # the usual, valid entry
            if fast is not None:
                witness.append(fast)
                continue
            if not isinstance(w, list) or len(w) not in lengths:
                raise _fail(
                    f"{where}.witness[{i}]", "expected [list, position, address, shape, dtype, zero rows, site]"
                )
            zero_rows = _int(w[5], where, -1, 1 << 40) if len(w) >= 6 else -1
            witness.append(
                WitnessCall(
                    _int(w[0], where, 0, 1 << 16),
                    _int(w[1], where, 0, 1 << 16),
                    _int(w[2], where),
                    _shape(w[3], where),
                    _text(w[4], where),
                    zero_rows,
                    _int(w[6], where, -1, MAX_SITES) if len(w) == 7 else -1,
                )
            )
        graphs = snapshots.decode(self.snapshot, obj.get("graphs"), f"{where}.graphs", self.version, self.array)
        sites = self.sites(obj.get("sites"), f"{where}.sites")
        if any(w.site >= len(sites) for w in witness):
            raise _fail(f"{where}.witness", "a call's site is not one of the step's sites")
        return StepObservation(
            index=_int(obj.get("index"), f"{where}.index", 0, MAX_STEPS),
            outcome=outcome,
            value=self.value(obj.get("value"), f"{where}.value"),
            error=error,
            # within report.json's integers (report_reading.MAX_INT): a report always reads back
            launches=_int(launches, f"{where}.launches", -(2**63), 2**63) if launches is not None else None,
            witness=tuple(witness),
            input_address=_int(obj["input_address"], f"{where}.input_address")
            if obj.get("input_address") is not None
            else None,
            ops=self.listed_ops(obj.get("ops"), f"{where}.ops"),
            graphs=graphs,
            note=_text(obj.get("note", ""), f"{where}.note"),
            sites=sites,
            bumps=self.bumps(obj.get("bumps"), f"{where}.bumps", len(sites)),
            calls=self.calls(obj.get("calls"), f"{where}.calls", len(sites)),
            origin=self.origin(obj.get("origin"), f"{where}.origin"),
            trace=trace_facts.decode(obj.get("trace"), f"{where}.trace"),
        )


def decode_observations(body: bytes, expected_case: str, step_count: int) -> CaseObservation:
    """Validate one observation frame; raises :class:`ProtocolError` when anything is off,
    whatever raised it (a decoder bug must cost that case, never the batch)."""
    try:
        return _decode_observations(body, expected_case, step_count)
    except ProtocolError:
        raise
    except validation.Invalid as exc:  # what the toolkit's readers found
        raise ProtocolError(exc.problem, exc.where) from None
    except Exception as exc:  # noqa: BLE001
        raise ProtocolError(f"observation frame could not be decoded ({type(exc).__name__})") from None


def _decode_observations(body: bytes, expected_case: str, step_count: int) -> CaseObservation:
    header, blobs = observation_parts(body)
    try:
        msg = json.loads(header)
    except (ValueError, RecursionError):  # bad JSON or UTF-8, or an integer over Python's digit limit
        raise ProtocolError("header is not valid JSON") from None
    if len(header) > LOOSE_HEADER_BYTES and len(header) > 2 * len(json.dumps(msg)):
        # the worker writes its header as json.dumps does: bytes beyond that are padding
        raise ProtocolError(f"a header of {len(header)} bytes, most of it padding")
    msg = _keys(msg, OBSERVATION_FIELDS, "observations")
    version = msg.get("protocol")
    if type(version) is not int or version not in READABLE_OBSERVATIONS:
        raise ProtocolError(f"observations of protocol {repr(version)[:80]}, expected {OBSERVATION_VERSION}")
    if msg.get("case") != expected_case:
        raise ProtocolError(f"observations are for case {str(msg.get('case'))[:80]!r}, expected {expected_case!r}")
    raw_steps = msg.get("steps")
    if not isinstance(raw_steps, list) or len(raw_steps) != step_count:
        raise ProtocolError(f"expected observations of {step_count} steps")
    decoder = _Decoder(blobs, version)
    steps = tuple(decoder.step(s, f"steps[{i}]") for i, s in enumerate(raw_steps))
    if [s.index for s in steps] != list(range(step_count)):
        raise ProtocolError("steps out of order")
    if len(decoder.used) != len(blobs):  # bytes no value is made of: refused, never held
        unused = sorted(set(range(len(blobs))) - decoder.used)
        raise ProtocolError(f"{len(unused)} array blob(s) used by no value (first: blob {unused[0]})")
    return CaseObservation(case=expected_case, steps=steps)
