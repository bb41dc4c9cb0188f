"""Everything that crosses the process boundary between grader and worker, as bytes, defined once.

* **Framing**: every message on a pipe is one frame, an 8-byte little-endian length then the
  body; :func:`frame` writes one, :func:`split_frame` and :func:`read_frame` take one off,
  refusing any length no valid frame has (:data:`MAX_FRAME_BYTES`).
* **Case messages** (grader -> worker): a case's id and steps, never its checks, as versioned JSON;
  and each case's **token** (:func:`token_message`), sent once the case before it has ended,
  which the case's status frame must carry, with the size of the frames written before it.
* **Control frames** (worker -> grader): typed, frozen, one class per kind (:class:`Ready`,
  :class:`ImportFailed`, :class:`CaseStatus`, :class:`SandboxFailed`); versioned JSON, every
  field validated on the way in.
* **Observation frames** (worker -> grader): the byte layout (magic, a JSON header, raw array
  blobs) and the field names of a step's record (:class:`StepRecord`; a snapshot entry's keys are
  the lab's, :class:`grader.lab.interface.Snapshot`), which the worker's interpreter writes and
  :mod:`grader.observations` validates and decodes.

Anything malformed raises :class:`ProtocolError`, never another exception. No other module
writes a length prefix (tests/test_framing.py checks the source).
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from grader import validation
from grader.lab import op_vocabulary
from grader.safetext import safe_text
from grader.spec_model import ArrayValue, MaskValue, OpSpec, OpsValue, PlainValue, RefValue, Step, Value

PROTOCOL_VERSION = 1
# Observation frames: 2 added the submission's own frames (a step's ``sites`` and ``bumps``, an
# error's ``frames``, a witness entry's site); 3 added each graph entry's ``entry_id`` and a step's
# ``origin`` (the submission's lines its value came from); 4 a probe step's line ``trace``
# (grader.trace_facts). Frames of versions 1 to 3 are still read, without them (an entry's
# identity then reads as -1).
OBSERVATION_VERSION = 4
READABLE_OBSERVATIONS = (1, 2, 3, 4)
OBSERVATION_V2_STEP_FIELDS = frozenset({"sites", "bumps"})
OBSERVATION_V3_STEP_FIELDS = frozenset({"origin", "calls"})
OBSERVATION_V4_STEP_FIELDS = frozenset({"trace"})
ORIGIN_KINDS = (
    "returned",
    "returned-plain",
    "tested",
    "assigned",
    "argument",
    "state",
    "passed",
    "guards",
    "decided",
    "compared",
    "looked-up",
    "produced",
    "called",
    "operand",
    "iterated",
    "emptied",
)
# field:<name>: where a field of the lab's snapshot entry (grader.lab.interface.Snapshot) got its
# value during the step; <name> one of the lab's snapshot fields
ORIGIN_FIELD = "field:"
# op:<N>: the last test a function of the submission ran while a local name of it held op N (its
# position in its list) of the op list the step was handed (grader.observe.origins)
ORIGIN_OP = "op:"
MAX_ORIGIN_FRAMES = 16
MAX_TEXT = 2000  # characters of any one string a worker sends
# Bounds on the submission's frames a step's record holds (grader.observe.locations).
MAX_FRAME_TEXT = 200  # characters of a frame's file, function or source line
MAX_SITES = 32  # call sites per step
MAX_SITE_FRAMES = 4  # frames of one call site, innermost first
MAX_TRACE_FRAMES = 8  # frames of an exception's traceback, outermost first
MAX_BUMPS = 256  # the launch counter's bump calls recorded per step
# per case, so that a case of many steps stays well inside MAX_HEADER_BYTES (the worker's bound)
MAX_CASE_SITES = 128
MAX_CASE_TRACE_FRAMES = 64


class ProtocolError(validation.Invalid):
    """A message that is not a valid message of this protocol."""


# ================================================================ framing
_PREFIX = struct.Struct("<Q")  # a frame's length
_COUNTS = struct.Struct("<II")  # an observation frame's header length and blob count
PREFIX_BYTES = _PREFIX.size
MAGIC = b"GGv1"  # an observation frame
CONTROL_MAGIC = b"GGc1"  # a control frame
MAX_HEADER_BYTES = 1 << 20
MAX_BLOB_BYTES = 8 << 20
MAX_BLOBS = 1024
MAX_CONTROL_BYTES = 64 * 1024
# The largest length prefix a valid frame can carry (the header, every blob and its
# 8-byte length, plus slack for magic and counts): a reader refuses anything longer.
MAX_FRAME_BYTES = MAX_HEADER_BYTES + MAX_BLOB_BYTES + 16 * MAX_BLOBS + 64
MAX_FRAMED_BYTES = PREFIX_BYTES + MAX_FRAME_BYTES  # one valid frame with its prefix


def frame(body: bytes) -> bytes:
    """``body`` with its length prefix."""
    return _PREFIX.pack(len(body)) + body


def split_frame(buffer: bytes, limit: int = MAX_FRAME_BYTES) -> tuple[bytes | None, bytes]:
    """Take one frame off the front of ``buffer``: (its body, the rest), or (None, ``buffer``)
    while it is incomplete. A length over ``limit`` is a :class:`ProtocolError`."""
    if len(buffer) < PREFIX_BYTES:
        return None, buffer
    end = PREFIX_BYTES + frame_length(buffer, limit)
    if len(buffer) < end:
        return None, buffer
    return buffer[PREFIX_BYTES:end], buffer[end:]


def frame_length(buffer, limit: int = MAX_FRAME_BYTES) -> int:
    """The length a frame's prefix (at the front of ``buffer``) gives; a :class:`ProtocolError`
    over ``limit`` (by default, any valid frame's)."""
    (length,) = _PREFIX.unpack_from(buffer)
    if length > limit:
        raise ProtocolError(f"frame of {length} bytes is larger than any valid frame")
    return length


def read_frame(fd: int) -> bytes | None:
    """The next frame's body from a blocking descriptor; None at end of stream (also inside a
    frame). No bound: only the grader writes where a worker reads this way (its case messages)."""
    header = _read_exact(fd, PREFIX_BYTES)
    if header is None:
        return None
    (length,) = _PREFIX.unpack(header)
    return _read_exact(fd, length)


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


# ================================================================ case messages (grader -> worker)
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
        vocabulary = op_vocabulary()
        for name, _ in body:
            if vocabulary is None or name not in vocabulary.kinds:
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
    """The only thing a worker learns about a case: its id and its steps (a frame's body)."""
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
                    "follow_values": s.follow_values,
                    **({"trace_call": True} if s.trace_call else {}),  # a first run's message is as before
                }
                for s in steps
            ],
        }
    ).encode()


def read_case_message(data: bytes) -> tuple[str, tuple[Step, ...]]:
    """A case message's id and steps (the worker trusts the grader: only the version is checked)."""
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
            follow_values=bool(s.get("follow_values", False)),
            trace_call=bool(s.get("trace_call", False)),
        )
        for i, s in enumerate(msg["steps"])
    )
    return msg["case"], steps


TOKEN_MAGIC = b"GGt1"  # a case's token (grader -> worker)


def token_message(uid: str, token: str) -> bytes:
    """The token of case ``uid`` (a frame's body), sent once the case before it has ended; the
    worker puts it into the case's status frame."""
    return TOKEN_MAGIC + json.dumps({"protocol": PROTOCOL_VERSION, "case": uid, "token": token}).encode()


def is_token(body: bytes) -> bool:
    return body[:4] == TOKEN_MAGIC


def read_token(body: bytes) -> tuple[str, str]:
    """A token message's case id and token (the worker trusts the grader: only the version is checked)."""
    msg = json.loads(body[4:])
    if msg.get("protocol") != PROTOCOL_VERSION:
        raise ProtocolError(f"token message of protocol {msg.get('protocol')!r}, expected {PROTOCOL_VERSION}")
    return msg["case"], msg["token"]


def framed_size(bodies) -> int:
    """The bytes ``bodies`` took on the wire, each with its length prefix: what a status frame
    says its worker wrote for the case before it (``CaseStatus.written``)."""
    return sum(PREFIX_BYTES + len(body) for body in bodies)


# ================================================================ control frames (worker -> grader)
@dataclass(frozen=True)
class Ready:
    """The submission imported: the worker waits for case messages."""

    KIND: ClassVar[str] = "ready"


@dataclass(frozen=True)
class ImportFailed:
    """Importing the submission raised: no case can run."""

    KIND: ClassVar[str] = "import_error"
    type: str
    message: str
    where: str  # file:line in the submission


@dataclass(frozen=True)
class CaseStatus:
    """A case has ended: how its process did, and where its output ends in the worker's log."""

    KIND: ClassVar[str] = "status"
    case: str
    exitcode: int | None
    signal: int | None
    output_end: int  # the log's size once the case's processes are gone
    # the token the grader issued for this case (see token_message): a status counts only for
    # the case whose token it carries, and the grader issues a case's token only once the case
    # before it has ended, so nothing written earlier can speak for it
    token: str = ""
    # bytes its worker wrote for this case before this frame (framed_size): a frame placed
    # there by anyone else (an earlier case's code, say) makes them disagree
    written: int = 0


@dataclass(frozen=True)
class SandboxFailed:
    """The worker could not confine itself: the machine's problem, not the submission's."""

    KIND: ClassVar[str] = "sandbox_error"
    message: str


Control = Ready | ImportFailed | CaseStatus | SandboxFailed
CONTROL_KINDS: dict[str, type] = {cls.KIND: cls for cls in (Ready, ImportFailed, CaseStatus, SandboxFailed)}
_CONTROL_FIELDS = {kind: tuple(f.name for f in fields(cls)) for kind, cls in CONTROL_KINDS.items()}


def _control_text(value: Any, where: str) -> str:
    return safe_text(validation.text(value, where, MAX_TEXT))


def _small_int(value: Any, where: str) -> int | None:
    return None if value is None else validation.integer(value, where, -1024, 1024)


# How each field a control frame may have is read (the same field means the same in every kind).
_CONTROL_READERS = {
    "type": _control_text,
    "message": _control_text,
    "where": _control_text,
    "case": _control_text,
    "exitcode": _small_int,
    "signal": _small_int,
    "output_end": lambda value, where: validation.integer(value, where, 0, 1 << 62),
    "token": lambda value, where: validation.text(value, where, 64),
    "written": lambda value, where: validation.integer(value, where, 0, 1 << 40),
}


def control_frame(message: Control) -> bytes:
    """A control message as one frame."""
    fields_ = {name: getattr(message, name) for name in _CONTROL_FIELDS[message.KIND]}
    return frame(CONTROL_MAGIC + json.dumps({"protocol": PROTOCOL_VERSION, "kind": message.KIND, **fields_}).encode())


def is_control(body: bytes) -> bool:
    return body[:4] == CONTROL_MAGIC


def decode_control(body: bytes) -> Control:
    """A worker's control frame, validated. Any failure to decode it, whatever raised it, is a
    :class:`ProtocolError`."""
    try:
        return _decode_control(body)
    except ProtocolError:
        raise
    except validation.Invalid as exc:
        raise ProtocolError(exc.problem, exc.where) from None
    except Exception as exc:  # noqa: BLE001 - a decoder bug must cost the case, never the batch
        raise ProtocolError(f"control frame could not be decoded ({type(exc).__name__})") from None


def _decode_control(body: bytes) -> Control:
    if len(body) > MAX_CONTROL_BYTES:
        raise ProtocolError("control frame too large")
    try:
        msg = json.loads(body[4:])
    except (ValueError, RecursionError):  # bad JSON or UTF-8, or an integer over Python's digit limit
        raise ProtocolError("control frame is not valid JSON") from None
    if not isinstance(msg, dict) or msg.get("protocol") != PROTOCOL_VERSION or msg.get("kind") not in CONTROL_KINDS:
        raise ProtocolError("not a control frame of this protocol")
    kind = msg["kind"]
    names = _CONTROL_FIELDS[kind]
    if msg.keys() - {"protocol", "kind"} != set(names):
        raise ProtocolError(f"a {kind} frame has fields {sorted(names)}")
    return CONTROL_KINDS[kind](**{name: _CONTROL_READERS[name](msg[name], name) for name in names})


# ================================================================ observation frames (worker -> grader)
@dataclass(slots=True)
class StepRecord:
    """One step's observation as the worker writes it (filled in while the step runs); the
    grader reads it back as a ``grader.observations.StepObservation``. Its fields are the record's
    keys on the wire, for the writer and the decoder alike."""

    index: int
    outcome: str = "returned"  # returned | raised | missing | not_reached
    value: Any = None  # an encoded value (grader.observations's encoder)
    error: dict | None = None  # an ErrorRecord's wire form
    launches: int | None = None
    witness: list = field(default_factory=list)  # [list, position, address, shape, dtype, zero rows]
    input_address: int | None = None
    # the snapshot of the step's object (lab.yaml: snapshot): one record per entry, its keys
    # grader.lab.interface.Snapshot.wire_keys; sent only when the step observes its object
    graphs: list | None = None
    note: str = ""
    ops: list | None = None  # [given, list, position, elementwise]; sent only when there are some
    # the submission's call sites of this step: each a list of frames [file, line, function,
    # source], innermost first; a witness entry's 7th item and a bump's 2nd are indices here
    sites: list | None = None
    bumps: list | None = None  # [amount, site] per bump call of the lab's launch counter
    # the calls this step made on each object the lab provides (its ``as`` name -> the calls its
    # log recorded during the step, each a list of text and integers, then its site index)
    calls: dict | None = None
    # where the step's value came from in the submission (grader.observe.origins): frames
    # [kind, file, line, function, source], kind one of ORIGIN_KINDS; sent only when there are some
    origin: list | None = None
    trace: dict | None = None  # a probe step's line trace (grader.trace_facts); sent only by a probe

    def wire(self) -> dict:
        record = {name: getattr(self, name) for name in STEP_FIELDS}
        for name in ("ops", "trace"):  # ops: sent only when the step returned a list (an empty one too)
            if record[name] is None:
                del record[name]
        for name in ("sites", "bumps", "origin", "calls"):  # sent only when there are some
            if not record[name]:
                del record[name]
        return record


@dataclass(frozen=True, slots=True)
class ErrorRecord:
    """What a step raised: its type's name, its message and the submission's frames of its
    traceback ([file, line, function, source], outermost first)."""

    type: str
    message: str
    frames: list = field(default_factory=list)

    def wire(self) -> dict:
        record = {name: getattr(self, name) for name in ERROR_FIELDS}
        if not record["frames"]:  # sent only when there are some
            del record["frames"]
        return record


OBSERVATION_FIELDS = frozenset({"protocol", "case", "steps"})
STEP_FIELDS = tuple(f.name for f in fields(StepRecord))
ERROR_FIELDS = tuple(f.name for f in fields(ErrorRecord))


def observation_frame(uid: str, steps: list[dict], blobs: list[bytes]) -> bytes:
    """One case's observations as one frame: magic, header length and blob count, the JSON
    header (``steps`` are :meth:`StepRecord.wire` forms), then each blob with its length."""
    header = json.dumps({"protocol": OBSERVATION_VERSION, "case": uid, "steps": steps}, allow_nan=False).encode()
    parts = [MAGIC, _COUNTS.pack(len(header), len(blobs)), header]
    for blob in blobs:
        parts.append(_PREFIX.pack(len(blob)))
        parts.append(blob)
    return frame(b"".join(parts))


def blob_bytes(body: bytes) -> int:
    """The bytes of an observation frame's blobs (what its decoded arrays hold), from its counts."""
    if body[:4] != MAGIC or len(body) < 12:
        return 0
    header_len, blob_count = _COUNTS.unpack_from(body, 4)
    return max(0, len(body) - 12 - header_len - PREFIX_BYTES * blob_count)


def observation_parts(body: bytes) -> tuple[bytes, list[memoryview]]:
    """An observation frame's body split into its JSON header and its blobs (views into
    ``body``, which they keep alive), every length checked against its bound and the body's size."""
    if body[:4] != MAGIC or len(body) < 12:
        raise ProtocolError("not an observation frame (bad magic)")
    header_len, blob_count = _COUNTS.unpack_from(body, 4)
    if header_len > MAX_HEADER_BYTES or blob_count > MAX_BLOBS:
        raise ProtocolError("frame header or blob count over its bound")
    pos = 12
    view = memoryview(body)
    if header_len < 2 or len(body) < pos + header_len or view[pos] != 0x7B or view[pos + header_len - 1] != 0x7D:
        # the worker writes its header as json.dumps does: one object, "{" to "}", nothing
        # around it (so padding before or after it is refused before a byte of it is parsed)
        raise ProtocolError("the header is not one JSON object, as the worker writes it")
    header = bytes(view[pos : pos + header_len])
    pos += header_len
    blobs = []
    for _ in range(blob_count):
        if pos + PREFIX_BYTES > len(body):
            raise ProtocolError("frame ends inside a blob length")
        (n,) = _PREFIX.unpack_from(body, pos)
        pos += PREFIX_BYTES
        if n > MAX_BLOB_BYTES or pos + n > len(body):
            raise ProtocolError("blob larger than the frame")
        blobs.append(view[pos : pos + n])  # a view: no copy of the frame's largest part
        pos += n
    if pos != len(body):
        raise ProtocolError("trailing bytes after the last blob")
    return header, blobs
