"""What crosses the process boundary between grader and worker, and how.

Two messages, both versioned:

* grader -> worker: a case's *steps* (never its checks), as JSON;
* worker -> grader: a case's *observations*, as one frame: a JSON header plus
  raw array bytes. Arrays travel as (dtype, shape, bytes) and are rebuilt as
  plain ``numpy.ndarray`` of exactly that dtype and shape on the grader side.

Nothing is pickled or evaluated. Every size is bounded and every field is
validated by :func:`decode_observations`; anything malformed raises
:class:`ProtocolError`, which the grader turns into an error verdict for that
case alone.
"""

from __future__ import annotations

import enum
import json
import math
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.ops import OP_KINDS, OpSpec
from grader.safetext import safe_text
from grader.spec_model import ArrayValue, MaskValue, OpsValue, PlainValue, RefValue, Step, Value

PROTOCOL_VERSION = 1
MAGIC = b"GGv1"
MAX_HEADER_BYTES = 1 << 20
MAX_BLOB_BYTES = 8 << 20
MAX_BLOBS = 1024
MAX_TEXT = 2000
MAX_LIST = 64
MAX_DEPTH = 4
MAX_STEPS = 256
MAX_WITNESS = 256
MAX_GRAPHS = 64
MAX_ELEMENTS = MAX_BLOB_BYTES  # elements of one array (a bool array of the largest blob)
# The largest length prefix a valid frame can carry (the header, every blob and its
# 8-byte length, plus slack for magic and counts): a reader refuses anything longer.
MAX_FRAME_BYTES = MAX_HEADER_BYTES + MAX_BLOB_BYTES + 16 * MAX_BLOBS + 64
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


class ProtocolError(ValueError):
    """A message that is not a valid message of this protocol."""


# ================================================================ grader -> worker
def _value_to_json(value: Value) -> dict:
    if isinstance(value, ArrayValue):
        return {"array": {"dtype": value.dtype, "shape": list(value.shape), "seed": value.seed, "values": value.values}}
    if isinstance(value, OpsValue):
        return {"ops": [[op.name, op.param] for op in value.chain]}
    if isinstance(value, MaskValue):
        return {"mask": list(value.mask)}
    if isinstance(value, RefValue):
        return {"ref": value.name}
    return {"plain": value.value}


def _value_from_json(data: dict) -> Value:
    ((kind, body),) = data.items()
    if kind == "array":
        values = body["values"]
        return ArrayValue(
            body["dtype"], tuple(body["shape"]), body["seed"], _tuplify(values) if values is not None else None
        )
    if kind == "ops":
        for name, _ in body:
            if name not in OP_KINDS:
                raise ProtocolError(f"unknown op {name!r}")
        return OpsValue(tuple(OpSpec(name, param) for name, param in body))
    if kind == "mask":
        return MaskValue(tuple(bool(m) for m in body))
    if kind == "ref":
        return RefValue(str(body))
    if kind == "plain":
        return PlainValue(_tuplify(body))
    raise ProtocolError(f"unknown value kind {kind!r}")


def _tuplify(value: Any) -> Any:
    return tuple(_tuplify(v) for v in value) if isinstance(value, list) else value


def case_message(uid: str, steps: tuple[Step, ...]) -> bytes:
    """The only thing a worker learns about a case: its id and its steps."""
    return json.dumps(
        {
            "protocol": PROTOCOL_VERSION,
            "case": uid,
            "steps": [
                {
                    "action": s.action,
                    "target": s.target,
                    "on": s.on,
                    "name": s.name,
                    "args": [_value_to_json(a) for a in s.args],
                    "kwargs": [[k, _value_to_json(v)] for k, v in s.kwargs],
                    "observe_graphs": s.observe_graphs,
                }
                for s in steps
            ],
        }
    ).encode()


def read_case_message(data: bytes) -> tuple[str, tuple[Step, ...]]:
    msg = json.loads(data)
    if msg.get("protocol") != PROTOCOL_VERSION:
        raise ProtocolError(f"case message of protocol {msg.get('protocol')!r}, expected {PROTOCOL_VERSION}")
    steps = tuple(
        Step(
            index=i,
            action=s["action"],
            target=s["target"],
            on=s["on"],
            name=s["name"],
            args=tuple(_value_from_json(a) for a in s["args"]),
            kwargs=tuple((k, _value_from_json(v)) for k, v in s["kwargs"]),
            observe_graphs=bool(s["observe_graphs"]),
        )
        for i, s in enumerate(msg["steps"])
    )
    return msg["case"], steps


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
class Raised:
    type: str
    message: str


@dataclass(frozen=True)
class GraphObservation:
    """One GraphEntry of a runner, as it was right after a step."""

    key: str
    shape: tuple[int, ...] | None
    static_input_id: int
    static_input_address: int
    static_input: np.ndarray | None
    num_ops: int | None
    output: np.ndarray | None = None  # the entry's ``output`` array, when it is one


@dataclass(frozen=True)
class WitnessCall:
    list_id: int
    position: int
    address: int
    shape: tuple[int, ...]
    dtype: str
    zero_rows: int = -1  # trailing all-zero rows of the array the op was handed; -1: not known


@dataclass(frozen=True)
class ListedOp:
    """One entry of a list of ops a step returned: one of the case's own ops (its list and
    position), or a new callable; and whether it is marked ``elementwise``."""

    given: bool
    list_id: int
    position: int
    elementwise: bool


@dataclass(frozen=True)
class StepObservation:
    index: int
    outcome: str  # returned | raised | missing | not_reached
    value: Any = None
    error: Raised | None = None
    launches: int | None = None
    witness: tuple[WitnessCall, ...] = ()
    input_address: int | None = None
    graphs: tuple[GraphObservation, ...] | None = None
    ops: tuple[ListedOp, ...] | None = None  # what a fuse_elementwise call returned
    note: str = ""  # why a step was missing / not reached


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
        dtype = str(arr.dtype)
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
    header = json.dumps({"protocol": PROTOCOL_VERSION, "case": uid, "steps": steps}, allow_nan=False).encode()
    parts = [MAGIC, struct.pack("<II", len(header), len(encoder_blobs)), header]
    for blob in encoder_blobs:
        parts.append(struct.pack("<Q", len(blob)))
        parts.append(blob)
    body = b"".join(parts)
    return struct.pack("<Q", len(body)) + body


new_encoder = _Encoder


# ================================================================ grader side: decode and validate
def _fail(where: str, message: str) -> ProtocolError:
    return ProtocolError(f"{where}: {message}")


def _int(obj: Any, where: str, lo: int = -(2**63), hi: int = 2**64) -> int:
    if not isinstance(obj, int) or isinstance(obj, bool) or not lo <= obj < hi:
        raise _fail(where, "expected an integer")
    return obj


def _text(obj: Any, where: str) -> str:
    """Every string a worker sends enters the grader here, and leaves it safe (grader.safetext)."""
    if not isinstance(obj, str) or len(obj) > MAX_TEXT:
        raise _fail(where, "expected text of bounded length")
    return safe_text(obj)


def _shape(obj: Any, where: str) -> tuple[int, ...]:
    """A shape of at most 8 dimensions and MAX_ELEMENTS elements, counting a zero-length
    dimension as one: (0, 2**31-1, 2**31-1) holds no element, yet numpy refuses to build it, and
    whatever judges it would work with the other dimensions."""
    if not isinstance(obj, list) or len(obj) > 8:
        raise _fail(where, "expected a shape")
    shape = tuple(_int(d, f"{where}[{i}]", 0, 1 << 31) for i, d in enumerate(obj))
    if math.prod(max(d, 1) for d in shape) > MAX_ELEMENTS:
        raise _fail(where, f"a shape of more than {MAX_ELEMENTS} elements")
    return shape


def _keys(obj: Any, allowed: set[str], where: str) -> dict:
    if not isinstance(obj, dict) or not set(obj) <= allowed:
        raise _fail(where, f"expected an object with keys from {sorted(allowed)}")
    return obj


def _witness_fast(w: Any) -> WitnessCall | None:
    """A witness entry that passes every check of the general path below (same bounds), decoded
    without its per-field calls; None for anything else, which the general path then decodes or
    refuses with its precise message. Most of an observation frame is witness entries."""
    if type(w) is not list or len(w) not in (5, 6):
        return None
    list_id, position, address, shape, dtype = w[0], w[1], w[2], w[3], w[4]
    zero_rows = w[5] if len(w) == 6 else -1
    if not (
        type(list_id) is int
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
    return WitnessCall(list_id, position, address, tuple(shape), text, zero_rows)


_SHORT_TEXTS: dict[str, str] = {}  # safe_text of the short strings frames repeat (dtype names)


class _Decoder:
    def __init__(self, blobs: list[bytes]) -> None:
        self.blobs = blobs
        self.used: set[int] = set()

    def array(self, obj: Any, where: str) -> np.ndarray:
        obj = _keys(obj, {"dtype", "shape", "blob"}, where)
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
        if not isinstance(raw, list) or len(raw) > MAX_WITNESS:
            raise _fail(where, "expected a bounded list")
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
        obj = _keys(
            obj,
            {"index", "outcome", "value", "error", "launches", "witness", "input_address", "graphs", "note", "ops"},
            where,
        )
        outcome = obj.get("outcome")
        if outcome not in OUTCOMES:
            raise _fail(f"{where}.outcome", f"expected one of {OUTCOMES}")
        error = None
        if obj.get("error") is not None:
            e = _keys(obj["error"], {"type", "message"}, f"{where}.error")
            error = Raised(
                _text(e.get("type"), f"{where}.error.type"), _text(e.get("message"), f"{where}.error.message")
            )
        launches = obj.get("launches")
        witness_raw = obj.get("witness", [])
        if not isinstance(witness_raw, list) or len(witness_raw) > MAX_WITNESS:
            raise _fail(f"{where}.witness", "expected a bounded list")
        witness = []
        for i, w in enumerate(witness_raw):
            fast = _witness_fast(w)  # the usual, valid entry, checked in one go
            if fast is not None:
                witness.append(fast)
                continue
            if not isinstance(w, list) or len(w) not in (5, 6):
                raise _fail(f"{where}.witness[{i}]", "expected [list, position, address, shape, dtype, zero rows]")
            zero_rows = _int(w[5], where, -1, 1 << 40) if len(w) == 6 else -1
            witness.append(
                WitnessCall(
                    _int(w[0], where, 0, 1 << 16),
                    _int(w[1], where, 0, 1 << 16),
                    _int(w[2], where),
                    _shape(w[3], where),
                    _text(w[4], where),
                    zero_rows,
                )
            )
        graphs = None
        if obj.get("graphs") is not None:
            if not isinstance(obj["graphs"], list) or len(obj["graphs"]) > MAX_GRAPHS:
                raise _fail(f"{where}.graphs", "expected a bounded list")
            graphs = []
            for i, g in enumerate(obj["graphs"]):
                at = f"{where}.graphs[{i}]"
                g = _keys(
                    g,
                    {"key", "shape", "static_input_id", "static_input_address", "static_input", "num_ops", "output"},
                    at,
                )
                static = g.get("static_input")
                output = g.get("output")
                graphs.append(
                    GraphObservation(
                        key=_text(g.get("key"), f"{at}.key"),
                        shape=_shape(g["shape"], f"{at}.shape") if g.get("shape") is not None else None,
                        static_input_id=_int(g.get("static_input_id"), f"{at}.static_input_id"),
                        static_input_address=_int(g.get("static_input_address"), f"{at}.static_input_address"),
                        static_input=self.array(static["ndarray"], f"{at}.static_input")
                        if isinstance(static, dict) and "ndarray" in static
                        else None,
                        num_ops=_int(g["num_ops"], f"{at}.num_ops") if g.get("num_ops") is not None else None,
                        output=self.array(output["ndarray"], f"{at}.output")
                        if isinstance(output, dict) and "ndarray" in output
                        else None,
                    )
                )
            graphs = tuple(graphs)
        return StepObservation(
            index=_int(obj.get("index"), f"{where}.index", 0, MAX_STEPS),
            outcome=outcome,
            value=self.value(obj.get("value"), f"{where}.value"),
            error=error,
            launches=_int(launches, f"{where}.launches") if launches is not None else None,
            witness=tuple(witness),
            input_address=_int(obj["input_address"], f"{where}.input_address")
            if obj.get("input_address") is not None
            else None,
            ops=self.listed_ops(obj.get("ops"), f"{where}.ops"),
            graphs=graphs,
            note=_text(obj.get("note", ""), f"{where}.note"),
        )


# ================================================================ control frames
CONTROL_MAGIC = b"GGc1"
CONTROL_KINDS = {
    "ready": set(),
    "import_error": {"type", "message", "where"},
    "status": {
        "case",
        "exitcode",
        "signal",
        "output_end",
    },  # output_end: the log's size once the case's processes are gone
    "sandbox_error": {"message"},  # the worker could not confine itself: the machine's problem, not the submission's
}


def control_frame(kind: str, **fields: object) -> bytes:
    body = CONTROL_MAGIC + json.dumps({"protocol": PROTOCOL_VERSION, "kind": kind, **fields}).encode()
    return struct.pack("<Q", len(body)) + body


def is_control(body: bytes) -> bool:
    return body[:4] == CONTROL_MAGIC


def decode_control(body: bytes) -> dict:
    """A worker's control frame (ready, import_error, status), validated. Any failure to decode
    it, whatever raised it, is a :class:`ProtocolError`."""
    try:
        return _decode_control(body)
    except ProtocolError:
        raise
    except Exception as exc:  # noqa: BLE001 - a decoder bug must cost the case, never the batch
        raise ProtocolError(f"control frame could not be decoded ({type(exc).__name__})") from None


def _decode_control(body: bytes) -> dict:
    if len(body) > 64 * 1024:
        raise ProtocolError("control frame too large")
    try:
        msg = json.loads(body[4:])
    except (ValueError, RecursionError):  # bad JSON or UTF-8, or an integer over Python's digit limit
        raise ProtocolError("control frame is not valid JSON") from None
    if not isinstance(msg, dict) or msg.get("protocol") != PROTOCOL_VERSION or msg.get("kind") not in CONTROL_KINDS:
        raise ProtocolError("not a control frame of this protocol")
    fields = CONTROL_KINDS[msg["kind"]]
    if set(msg) - {"protocol", "kind"} != fields:
        raise ProtocolError(f"a {msg['kind']} frame has fields {sorted(fields)}")
    for key in ("type", "message", "where", "case"):
        if key in msg:
            msg[key] = _text(msg[key], key)
    for key in ("exitcode", "signal"):
        if key in msg and msg[key] is not None:
            _int(msg[key], key, -1024, 1024)
    if "output_end" in msg:
        _int(msg["output_end"], "output_end", 0, 1 << 62)
    return msg


def split_frame(buffer: bytes) -> tuple[bytes | None, bytes]:
    """Take one length-prefixed frame off the front of ``buffer`` (None if incomplete)."""
    if len(buffer) < 8:
        return None, buffer
    (length,) = struct.unpack_from("<Q", buffer)
    if length > MAX_FRAME_BYTES:
        raise ProtocolError(f"frame of {length} bytes is larger than any valid frame")
    if len(buffer) < 8 + length:
        return None, buffer
    return buffer[8 : 8 + length], buffer[8 + length :]


def decode_observations(body: bytes, expected_case: str, step_count: int) -> CaseObservation:
    """Validate one observation frame; raises :class:`ProtocolError` when anything is off,
    whatever raised it (a decoder bug must cost that case, never the batch)."""
    try:
        return _decode_observations(body, expected_case, step_count)
    except ProtocolError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise ProtocolError(f"observation frame could not be decoded ({type(exc).__name__})") from None


def _decode_observations(body: bytes, expected_case: str, step_count: int) -> CaseObservation:
    if body[:4] != MAGIC or len(body) < 12:
        raise ProtocolError("not an observation frame (bad magic)")
    header_len, blob_count = struct.unpack_from("<II", body, 4)
    if header_len > MAX_HEADER_BYTES or blob_count > MAX_BLOBS:
        raise ProtocolError("frame header or blob count over its bound")
    pos = 12
    header = body[pos : pos + header_len]
    pos += header_len
    blobs = []
    for _ in range(blob_count):
        if pos + 8 > len(body):
            raise ProtocolError("frame ends inside a blob length")
        (n,) = struct.unpack_from("<Q", body, pos)
        pos += 8
        if n > MAX_BLOB_BYTES or pos + n > len(body):
            raise ProtocolError("blob larger than the frame")
        blobs.append(body[pos : pos + n])
        pos += n
    if pos != len(body):
        raise ProtocolError("trailing bytes after the last blob")
    try:
        msg = json.loads(header)
    except (ValueError, RecursionError):  # bad JSON or UTF-8, or an integer over Python's digit limit
        raise ProtocolError("header is not valid JSON") from None
    msg = _keys(msg, {"protocol", "case", "steps"}, "observations")
    if msg.get("protocol") != PROTOCOL_VERSION:
        raise ProtocolError(f"observations of protocol {repr(msg.get('protocol'))[:80]}, expected {PROTOCOL_VERSION}")
    if msg.get("case") != expected_case:
        raise ProtocolError(f"observations are for case {str(msg.get('case'))[:80]!r}, expected {expected_case!r}")
    raw_steps = msg.get("steps")
    if not isinstance(raw_steps, list) or len(raw_steps) != step_count:
        raise ProtocolError(f"expected observations of {step_count} steps")
    decoder = _Decoder(blobs)
    steps = tuple(decoder.step(s, f"steps[{i}]") for i, s in enumerate(raw_steps))
    if [s.index for s in steps] != list(range(step_count)):
        raise ProtocolError("steps out of order")
    return CaseObservation(case=expected_case, steps=steps)
