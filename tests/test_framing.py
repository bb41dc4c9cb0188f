"""The wire codec (grader.framing): framing, case messages, control frames, the observation frame's
layout, and that no other module of the grader writes or reads a length prefix by hand.

Frames are checked against bytes built here with :mod:`struct` (not by the codec under test);
every malformed input must give a ProtocolError, never another exception.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import struct
import textwrap
import time
from pathlib import Path

import pytest
from support.spec_text import RUNNER_STEPS, load_case

from grader import framing, observations
from grader.framing import CaseStatus, ImportFailed, ProtocolError, Ready, SandboxFailed
from grader.spec_model import ArrayValue, MaskValue, OpsValue, PlainValue, RefValue, Step
from grader.validation import Invalid

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ framing
def test_a_frame_is_its_length_little_endian_then_its_body():
    assert framing.frame(b"abc") == struct.pack("<Q", 3) + b"abc"
    assert framing.frame(b"") == b"\x00" * 8


def test_split_frame_takes_frames_off_the_front_one_at_a_time():
    stream = framing.frame(b"one") + framing.frame(b"") + framing.frame(b"three") + b"\x05\x00"
    first, rest = framing.split_frame(stream)
    second, rest = framing.split_frame(rest)
    third, rest = framing.split_frame(rest)
    assert (first, second, third) == (b"one", b"", b"three")
    assert framing.split_frame(rest) == (None, b"\x05\x00")  # an incomplete prefix waits for more


@pytest.mark.parametrize("cut", range(0, 8 + 5))
def test_an_incomplete_frame_is_left_whole_in_the_buffer(cut):
    partial = framing.frame(b"hello")[:cut]
    assert framing.split_frame(partial) == (None, partial)


def test_the_frame_size_limit():
    at_limit = struct.pack("<Q", framing.MAX_FRAME_BYTES)
    assert framing.split_frame(at_limit) == (None, at_limit)  # allowed: waits for the body
    with pytest.raises(ProtocolError, match="larger than any valid frame"):
        framing.split_frame(struct.pack("<Q", framing.MAX_FRAME_BYTES + 1))
    with pytest.raises(ProtocolError):
        framing.split_frame(b"\xff" * 8)
    assert framing.split_frame(framing.frame(b"12345"), limit=5) == (b"12345", b"")
    with pytest.raises(ProtocolError):
        framing.split_frame(framing.frame(b"123456"), limit=5)
    assert framing.MAX_FRAMED_BYTES == 8 + framing.MAX_FRAME_BYTES


def test_read_frame_reads_whole_frames_from_a_descriptor():
    r, w = os.pipe()
    try:
        os.write(w, framing.frame(b"first") + framing.frame(b"") + framing.frame(b"sec"))
        os.write(w, b"ond"[:0])
        assert framing.read_frame(r) == b"first"
        assert framing.read_frame(r) == b""
        assert framing.read_frame(r) == b"sec"
        os.write(w, struct.pack("<Q", 10) + b"cut")  # the writer ends inside a frame
        os.close(w)
        w = -1
        assert framing.read_frame(r) is None
        assert framing.read_frame(r) is None  # and at the end of the stream
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


# ------------------------------------------------------------------ observation frames
def test_an_observation_frame_round_trips_its_header_and_blobs():
    blobs = [b"\x00" * 24, b"", b"xyz"]
    framed = framing.observation_frame("s/c", [{"index": 0}], blobs)
    body, rest = framing.split_frame(framed)
    assert rest == b""
    header, got = framing.observation_parts(body)
    assert json.loads(header) == {"protocol": framing.OBSERVATION_VERSION, "case": "s/c", "steps": [{"index": 0}]}
    assert got == blobs
    # the same bytes built by hand
    raw = json.dumps({"protocol": framing.OBSERVATION_VERSION, "case": "s/c", "steps": [{"index": 0}]}).encode()
    by_hand = framing.MAGIC + struct.pack("<II", len(raw), 3) + raw
    for blob in blobs:
        by_hand += struct.pack("<Q", len(blob)) + blob
    assert body == by_hand


def _body(header: bytes = b"{}", blobs: list[bytes] = (), counts: tuple[int, int] | None = None) -> bytes:
    header_len, blob_count = counts or (len(header), len(blobs))
    out = framing.MAGIC + struct.pack("<II", header_len, blob_count) + header
    for blob in blobs:
        out += struct.pack("<Q", len(blob)) + blob
    return out


@pytest.mark.parametrize(
    "name, body",
    [
        ("bad magic", b"GGv2" + _body()[4:]),
        ("a control frame", framing.CONTROL_MAGIC + _body()[4:]),
        ("shorter than magic and counts", framing.MAGIC + b"\x00" * 7),
        ("header over its bound", _body(counts=(framing.MAX_HEADER_BYTES + 1, 0))),
        ("blob count over its bound", _body(counts=(2, framing.MAX_BLOBS + 1))),
        ("blob count over the frame", _body(counts=(2, 3))),
        ("ends inside a blob length", _body(blobs=[b"ab"])[:-6]),
        ("blob longer than the frame", _body(blobs=[b"abcd"])[:-1]),
        ("blob over its bound", _body(counts=(2, 1)) + struct.pack("<Q", framing.MAX_BLOB_BYTES + 1)),
        ("trailing bytes", _body(blobs=[b"ab"]) + b"\x00"),
        ("header longer than the frame", _body(b"{}", counts=(50, 0))),
    ],
)
def test_malformed_observation_layouts_are_protocol_errors(name, body):
    with pytest.raises(ProtocolError):
        framing.observation_parts(body)
    with pytest.raises(ProtocolError):  # and so through the decoder, whatever the header says
        observations.decode_observations(body, "s/c", 0)


def test_the_largest_blob_is_within_the_bounds():
    blob = b"\x01" * framing.MAX_BLOB_BYTES
    body, _ = framing.split_frame(framing.observation_frame("s/c", [], [blob]))
    assert framing.observation_parts(body)[1] == [blob]


# ------------------------------------------------------------------ the observation record
def test_a_step_record_on_the_wire_has_exactly_the_fields_the_decoder_reads():
    record = framing.StepRecord(3)
    optional = ("ops", "sites", "bumps", "calls", "origin", "trace")  # sent only when there are some
    assert list(record.wire()) == [f for f in framing.STEP_FIELDS if f not in optional]
    record.ops = [[True, 0, 1, False]]
    record.sites = [[["cudagraph.py", 3, "f", "x = 1"]]]
    record.bumps = [[1, 0]]
    record.origin = [["returned", "cudagraph.py", 4, "f", "return x"]]
    record.calls = {"eng": [["run", 4, 1, 0]]}
    record.trace = {"lines": [], "replay_launches": 1, "buffer": True, "cache": "graphs"}
    assert list(record.wire()) == list(framing.STEP_FIELDS)
    with pytest.raises(AttributeError):
        record.launch_count = 1  # a misspelt field is an error in the writer, not a key on the wire
    assert framing.ErrorRecord("ValueError", "no").wire() == {"type": "ValueError", "message": "no"}


def test_every_field_of_the_record_decodes_and_no_other_does():
    record = framing.StepRecord(0, outcome="raised", launches=1, note="n")
    record.error = framing.ErrorRecord("ValueError", "no").wire()
    record.graphs = [  # an entry of the CUDA-graph lab's snapshot (its lab.yaml: snapshot)
        {"key": "k", "entry_id": 5, "static_input_id": 1, "static_input_address": 2, "static_input": None}
        | {"shape": [2], "num_ops": 3, "output": None}
    ]
    record.ops = [[False, -1, -1, True]]
    record.origin = [["tested", "cudagraph.py", 7, "step_mode", "if n < w:"]]
    body, _ = framing.split_frame(framing.observation_frame("s/c", [record.wire()], []))
    (step,) = observations.decode_observations(body, "s/c", 1).steps
    assert (step.outcome, step.launches, step.note, step.error.message) == ("raised", 1, "n", "no")
    assert step.graphs[0].num_ops == 3 and step.graphs[0].entry_id == 5 and step.ops[0].elementwise
    assert step.graphs[0].shape == (2,) and step.graphs[0].static_input_address == 2
    assert [(o.kind, o.frame.line, o.frame.function) for o in step.origin] == [("tested", 7, "step_mode")]
    op = {
        **record.wire(),
        "origin": [["op:2", "cudagraph.py", 9, "fuse", "if e:"], ["called", "cudagraph.py", 3, "f", ""]],
    }
    body, _ = framing.split_frame(framing.observation_frame("s/c", [op], []))
    (step,) = observations.decode_observations(body, "s/c", 1).steps
    assert [(o.kind, o.frame.line, o.valued) for o in step.origin] == [("op:2", 9, False), ("called", 3, False)]
    valued = [["compared", "c.py", 4, "key", "return (b,)", [4, 8]], ["operand", "c.py", 2, "pick", "", "None"]]
    body, _ = framing.split_frame(framing.observation_frame("s/c", [{**record.wire(), "origin": valued}], []))
    (step,) = observations.decode_observations(body, "s/c", 1).steps
    assert [(o.value, o.valued) for o in step.origin] == [((4, 8), True), (None, True)]
    ops_bad = [[[kind, "cudagraph.py", 9, "f", ""]] for kind in ("op:", "op:x", "op:-1", "op:256", "op:²", "op:2 ")]
    ops_bad += [[["compared", "c.py", 4, "k", "", bad]] for bad in ("none", 1.5, True, [1] * 9, [True], {"a": 1})]
    ops_bad.append([["compared", "c.py", 4, "k", "", 1, 2]])
    too_many = [["tested", "cudagraph.py", 7, "f", ""]] * (framing.MAX_ORIGIN_FRAMES + 1)
    for bad in (
        [["guessed", "cudagraph.py", 7, "f", ""]],
        [["tested", "cudagraph.py", 7, "f"]],
        [[]] * 4,
        *ops_bad,
        too_many,
    ):
        wire = {**record.wire(), "origin": bad}
        body, _ = framing.split_frame(framing.observation_frame("s/c", [wire], []))
        with pytest.raises(ProtocolError, match="origin"):
            observations.decode_observations(body, "s/c", 1)
    for extra in ({"verdict": "passed"}, {"graphs": [{**record.graphs[0], "pickle": 1}]}, {"error": {"type": "X"}}):
        wire = {**record.wire(), **extra}
        body, _ = framing.split_frame(framing.observation_frame("s/c", [wire], []))
        if extra.get("error") == {"type": "X"}:  # a missing field is read as null, then refused as text
            with pytest.raises(ProtocolError, match="error.message"):
                observations.decode_observations(body, "s/c", 1)
            continue
        with pytest.raises(ProtocolError, match="expected an object with keys from"):
            observations.decode_observations(body, "s/c", 1)


# ------------------------------------------------------------------ control frames
CONTROLS = [
    Ready(),
    ImportFailed(type="SyntaxError", message="invalid syntax", where="cudagraph.py:3"),
    CaseStatus(case="spec/case", exitcode=0, signal=None, output_end=120, token="ab" * 16, written=4096),
    CaseStatus(case="spec/case", exitcode=None, signal=9, output_end=0),
    SandboxFailed(message="landlock: not supported"),
]


@pytest.mark.parametrize("message", CONTROLS, ids=lambda m: type(m).__name__)
def test_every_control_kind_round_trips(message):
    body, rest = framing.split_frame(framing.control_frame(message))
    assert rest == b"" and framing.is_control(body)
    assert framing.decode_control(body) == message
    # versioned JSON behind its magic, with exactly the kind's fields
    data = json.loads(body[4:])
    assert data.pop("protocol") == framing.PROTOCOL_VERSION and data.pop("kind") == message.KIND
    assert list(data) == [f.name for f in dataclasses.fields(framing.CONTROL_KINDS[message.KIND])]


def test_control_kinds_are_one_class_each():
    assert set(framing.CONTROL_KINDS) == {"ready", "import_error", "status", "sandbox_error"}
    for kind, cls in framing.CONTROL_KINDS.items():
        assert cls.KIND == kind and cls.__dataclass_params__.frozen


def _control(**msg) -> bytes:
    return framing.CONTROL_MAGIC + json.dumps(msg).encode()


STATUS = {
    "protocol": 1,
    "kind": "status",
    "case": "s/c",
    "exitcode": 0,
    "signal": None,
    "output_end": 5,
    "token": "t",
    "written": 0,
}


@pytest.mark.parametrize(
    "name, body, match",
    [
        ("unknown kind", _control(protocol=1, kind="budget"), "not a control frame of this protocol"),
        ("made-up timeout", _control(protocol=1, kind="timeout"), "not a control frame of this protocol"),
        ("no kind", _control(protocol=1), "not a control frame"),
        ("other version", _control(**{**STATUS, "protocol": 2}), "not a control frame"),
        ("not an object", framing.CONTROL_MAGIC + b"[1, 2]", "not a control frame"),
        ("not JSON", framing.CONTROL_MAGIC + b"{nope", "not valid JSON"),
        ("not UTF-8", framing.CONTROL_MAGIC + b'{"a": "\xff"}', "not valid JSON"),
        ("missing field", _control(**{k: v for k, v in STATUS.items() if k != "output_end"}), "has fields"),
        ("extra field", _control(**STATUS, passed=True), "has fields"),
        ("ready with a field", _control(protocol=1, kind="ready", case="s/c"), "has fields"),
        ("exit code a bool", _control(**{**STATUS, "exitcode": True}), "exitcode: expected an integer"),
        ("exit code out of range", _control(**{**STATUS, "exitcode": 1024}), "exitcode"),
        ("signal out of range", _control(**{**STATUS, "signal": -1025}), "signal"),
        ("output end negative", _control(**{**STATUS, "output_end": -1}), "output_end"),
        ("output end too large", _control(**{**STATUS, "output_end": 1 << 62}), "output_end"),
        ("case not text", _control(**{**STATUS, "case": 7}), "case: expected text"),
        ("text too long", _control(protocol=1, kind="sandbox_error", message="x" * (framing.MAX_TEXT + 1)), "message"),
        ("too large", _control(protocol=1, kind="sandbox_error", message="x" * framing.MAX_CONTROL_BYTES), "too large"),
        ("deep nesting", framing.CONTROL_MAGIC + b"[" * 30000 + b"]" * 30000, "not valid JSON|not a control"),
        ("huge integer", framing.CONTROL_MAGIC + b'{"protocol": ' + b"9" * 5000 + b"}", "not valid JSON"),
    ],
)
def test_malformed_control_frames_are_protocol_errors(name, body, match):
    with pytest.raises(ProtocolError, match=match):
        framing.decode_control(body)


def test_a_control_frames_text_is_made_safe():
    body, _ = framing.split_frame(framing.control_frame(ImportFailed(type="E\x1b[2J", message="a\u202eb", where="x:1")))
    decoded = framing.decode_control(body)
    assert decoded == ImportFailed(type="E", message="a\ufffdb", where="x:1")


@pytest.mark.parametrize("message", CONTROLS[1:3], ids=lambda m: type(m).__name__)
def test_every_truncation_of_a_frame_is_incomplete_or_a_protocol_error(message):
    framed = framing.control_frame(message)
    observation = framing.observation_frame("s/c", [framing.StepRecord(0).wire()], [b"abc"])
    for whole in (framed, observation):
        for cut in range(len(whole)):
            part = whole[:cut]
            body, _ = framing.split_frame(part)
            assert body is None
            # the same bytes taken as a whole body (as a worker's relay would pass them on)
            try:
                if framing.is_control(part[8:]):
                    framing.decode_control(part[8:])
                else:
                    observations.decode_observations(part[8:], "s/c", 1)
            except ProtocolError as exc:
                assert str(exc)


def test_protocol_errors_carry_where_they_were_found():
    body = _control(**{**STATUS, "exitcode": "0"})
    with pytest.raises(ProtocolError) as info:
        framing.decode_control(body)
    assert isinstance(info.value, Invalid) and info.value.where == "exitcode"
    assert info.value.problem == "expected an integer"


# ------------------------------------------------------------------ case messages
def test_a_case_message_round_trips_every_kind_of_value():
    steps = (
        Step(0, "build", "GraphRunner", name="runner", args=(OpsValue(()),)),
        Step(
            1,
            "call",
            "runner",
            args=(ArrayValue("float32", (2, 3), seed=4), ArrayValue("int64", (2,), 0, ((1, 2),))),
            kwargs=(("mask", MaskValue((True, False))), ("n", PlainValue((1, (2, 3))))),
            observe_graphs=True,
        ),
        Step(2, "method", "reset", on="runner", args=(RefValue("runner"),)),
    )
    uid, got = framing.read_case_message(framing.case_message("s/c", steps))
    assert uid == "s/c" and got == steps


def test_the_case_message_carries_steps_but_no_checks():
    case, _ = load_case(
        RUNNER_STEPS, "output: {step: second, equals: {values: [[123.5]]}}\nlaunches: {step: second, equals: 17}"
    )
    message = framing.case_message(case.uid, case.steps)
    data = json.loads(message)
    assert set(data) == {"protocol", "case", "steps"}
    assert b"123.5" not in message and b"17" not in message and b"equals" not in message
    uid, steps = framing.read_case_message(message)
    assert uid == case.uid and [s.label for s in steps] == [s.label for s in case.steps]


def test_a_case_message_of_another_version_or_with_an_unknown_op_is_refused():
    message = json.loads(framing.case_message("s/c", (Step(0, "build", "GraphRunner", args=(OpsValue(()),)),)))
    with pytest.raises(ProtocolError, match="protocol 2"):
        framing.read_case_message(json.dumps({**message, "protocol": 2}).encode())
    message["steps"][0]["args"] = [{"ops": [["rm -rf", None]]}]
    with pytest.raises(ProtocolError, match="unknown op"):
        framing.read_case_message(json.dumps(message).encode())


# ------------------------------------------------------------------ nobody else frames by hand
# (file, what) of the grader's own byte-level length handling that is not a wire frame. Each
# entry must still occur (a stale entry fails too).
NOT_FRAMES = {
    ("grader/run/cache.py", "to_bytes(8, 'little')"),  # a length inside a hash's input
    ("grader/commands/lms_import/safe_archive.py", "from_bytes(tail[at + 10:at + 12], 'little')"),  # a zip's count
    ("grader/run/worker/pidns.py", "import struct"),  # an exit status through a pipe, not a frame
}


def hand_framing(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module handles fixed-width binary lengths itself: it imports :mod:`struct`, or
    calls ``to_bytes``/``from_bytes`` with a little-endian byte order (the wire's)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "struct" for a in node.names):
            found.append((node.lineno, "import struct"))
        elif isinstance(node, ast.ImportFrom) and node.module == "struct":
            found.append((node.lineno, "from struct import"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("to_bytes", "from_bytes"):
                args = [*node.args, *(k.value for k in node.keywords)]
                if any(isinstance(a, ast.Constant) and a.value == "little" for a in args):
                    shown = ", ".join(ast.unparse(a) for a in node.args[:2])
                    found.append((node.lineno, f"{node.func.attr}({shown})"))
    return sorted(found)


def test_no_module_but_the_codec_writes_or_reads_a_length_prefix():
    uses = set()
    for path in sorted((ROOT / "grader").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "grader/framing.py":
            continue
        for line, what in hand_framing(ast.parse(path.read_text(encoding="utf-8"))):
            uses.add((rel, what, line))
    new = sorted(u for u in uses if u[:2] not in NOT_FRAMES)
    assert not new, "length prefixes by hand (use grader.framing):\n" + "\n".join(f"{f}:{n}: {w}" for f, w, n in new)
    stale = NOT_FRAMES - {u[:2] for u in uses}
    assert not stale, f"remove from NOT_FRAMES: {sorted(stale)}"


def test_the_hand_framing_scanner_finds_each_form():
    source = textwrap.dedent(
        """
        import struct
        from struct import pack
        import json
        a = len(b).to_bytes(8, "little") + b
        n = int.from_bytes(h, byteorder="little")
        k = int.from_bytes(digest[:8], "big")  # a hash, not a length on the wire
        """
    )
    assert [w for _, w in hand_framing(ast.parse(source))] == [
        "import struct",
        "from struct import",
        "to_bytes(8, 'little')",
        "from_bytes(h)",
    ]


def test_the_grader_s_reader_takes_trickled_frames_whole_and_refuses_a_long_prefix():
    """grader.run.pipes.Reader: frames written a byte or a few at a time come out whole and in
    order; a length over any valid frame's is refused from the prefix alone."""
    import threading

    from grader.run.pipes import Reader

    stream = framing.frame(b"one") + framing.frame(b"") + framing.frame(b"x" * 70000) + framing.frame(b"three")
    r, w = os.pipe()

    def trickle():
        for i in range(0, len(stream), 997):
            os.write(w, stream[i : i + 997])
        os.close(w)

    writer = threading.Thread(target=trickle)
    writer.start()
    reader = Reader(r)
    got = []
    while (frame := reader.next(time.monotonic() + 60)) is not None:
        got.append(bytes(frame))
    writer.join()
    os.close(r)
    assert got == [b"one", b"", b"x" * 70000, b"three"]
    r, w = os.pipe()
    os.write(w, struct.pack("<Q", framing.MAX_FRAME_BYTES + 1))
    with pytest.raises(framing.ProtocolError):
        Reader(r).next(time.monotonic() + 60)
    os.close(r)
    os.close(w)


def test_a_provided_objects_calls_decode_bounded_and_checked():
    record = framing.StepRecord(0)
    record.sites = [[["decode_step.py", 9, "step", "self.engine.run(b, s)"]]]
    record.calls = {"eng": [["run", 4, 1, 0], ["replay", 7, 4, 1, -1]]}
    body, _ = framing.split_frame(framing.observation_frame("s/c", [record.wire()], []))
    (step,) = observations.decode_observations(body, "s/c", 1).steps
    calls = dict(step.calls)
    assert [(c.items, c.site) for c in calls["eng"]] == [(("run", 4, 1), 0), (("replay", 7, 4, 1), -1)]
    for bad in (
        {"eng": [["run", 4, 1, 5]]},  # a site the step does not have
        {"eng": [["run", 4.5, 1, 0]]},  # neither text nor an integer
        {"eng": [[0]]},  # no call, only a site
        {"eng": [["run"] * 12]},  # more items than a call has
        ["eng"],  # not a mapping
        {f"e{i}": [] for i in range(observations.MAX_PROVIDED + 1)},  # too many objects
    ):
        wire = {**record.wire(), "calls": bad}
        body, _ = framing.split_frame(framing.observation_frame("s/c", [wire], []))
        with pytest.raises(ProtocolError, match="calls"):
            observations.decode_observations(body, "s/c", 1)
