"""Fuzzing the three readers of untrusted or hand-written input (hypothesis).

* the spec loader (``load_spec_text``): random text, mutated real spec files and random
  YAML documents built from the spec vocabulary must give a :class:`SpecError` with a
  one-line message, or load; never another exception;
* the report reader (``report_from_json``, ``read_report``): random JSON-like data,
  mutated valid reports and random bytes on disk give :class:`ReportError` or a report;
* the grader's side of the worker protocol (``split_frame``, ``decode_observations``,
  ``decode_control``): random and mutated frames give :class:`ProtocolError` or a value.

Each property runs ~200 examples and a few seconds at most.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from grader import framing, observations
from grader.judging.report_reading import ReportError, read_report, report_from_json
from grader.judging.report_writing import report_to_json
from grader.judging.results import Report
from grader.suite import loader
from grader.suite.loader import SpecError, load_spec_text

SPECS = sorted((Path(__file__).resolve().parents[1] / "specs").glob("*.yaml"))
FUZZ = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
# A real spec costs 20-60 ms to load with the pure-Python parser (the libyaml/pure-Python
# comparison below parses each twice): fewer examples where each is a real spec.
FUZZ_REAL = settings(FUZZ, max_examples=80)


def _spec_chunks() -> list[str]:
    """Each spec of the bundled files as a document of its own (header, comments and styles
    kept): small real documents, so mutating them stays fast."""
    chunks = []
    for path in SPECS:
        lines = path.read_text().split("\n")
        starts = [i for i, line in enumerate(lines) if line.startswith("  - id:")]
        header = lines[: starts[0]]
        for a, b in zip(starts, starts[1:] + [len(lines)]):
            chunks.append("\n".join(header + lines[a:b]))
    return chunks


SPEC_TEXTS = _spec_chunks()


# ------------------------------------------------------------------ helpers: mutations
@st.composite
def mutated_text(draw, texts: list[str]) -> str:
    """A real text with a few edits: a deleted, duplicated or swapped line, a cut, a changed
    character, an inserted token."""
    text = draw(st.sampled_from(texts))
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "indent", "dedent", "char", "token", "cut"]))
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "indent":
            lines[i] = "  " + lines[i]
        elif kind == "dedent":
            lines[i] = lines[i].lstrip()
        elif kind == "char" and lines[i]:
            k = draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:k] + draw(st.characters(codec="utf-8")) + lines[i][k + 1 :]
        elif kind == "token":
            token = draw(
                st.sampled_from(
                    [
                        "-",
                        ":",
                        "{",
                        "[",
                        "]",
                        "}",
                        "&a",
                        "*a",
                        "!!python/object:os.system",
                        "<<: *a",
                        "~",
                        "1e999",
                        "-1",
                        "0x10",
                        "'",
                        '"',
                        "\t",
                        "\x00",
                        "null",
                        "yes",
                        "[[[[[[[[",
                        "?",
                    ]
                )
            )
            lines[i] = lines[i] + " " + token
        elif kind == "cut":
            lines = lines[:i]
    return "\n".join(lines)


@st.composite
def mutated_json(draw, value):
    """``value`` with one node replaced, deleted or given an extra key (recursively chosen)."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        out = dict(value)
        choice = draw(st.sampled_from(["recurse", "delete", "replace", "extra"]))
        if choice == "recurse":
            out[key] = draw(mutated_json(value[key]))
        elif choice == "delete":
            del out[key]
        elif choice == "replace":
            out[key] = draw(JSON_LIKE)
        else:
            out[draw(st.text(max_size=8))] = draw(JSON_LIKE)
        return out
    if isinstance(value, list) and value and draw(st.booleans()):
        i = draw(st.integers(0, len(value) - 1))
        out = list(value)
        out[i] = draw(mutated_json(value[i]))
        return out
    return draw(JSON_LIKE)


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
)
JSON_LIKE = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=25,
)


def _one_line(exc: Exception) -> None:
    message = str(exc)
    assert message and "\n" not in message, f"not one line: {message!r}"
    assert "Traceback" not in message


# ------------------------------------------------------------------ the spec loader
def _load(text: str) -> None:
    try:
        load_spec_text(text, "fuzz.yaml")
    except SpecError as exc:
        _one_line(exc)
        assert str(exc).startswith("fuzz.yaml:"), str(exc)


@pytest.mark.slow
@FUZZ
@given(st.text(max_size=400))
def test_spec_loader_random_text(text):
    _load(text)


def test_spec_chunks_load():
    for text in SPEC_TEXTS:
        assert len(load_spec_text(text, "chunk.yaml").specs) == 1


@pytest.mark.slow
@FUZZ_REAL
@given(mutated_text(SPEC_TEXTS))
def test_spec_loader_mutated_specs(text):
    _load(text)


def _outcome(text: str, libyaml: bool, monkeypatch) -> object:
    """What loading ``text`` gives (the spec file, or the error's words) with or without libyaml."""
    monkeypatch.setattr(loader, "_LIBYAML_LOADER", yaml.CSafeLoader if libyaml else None)
    try:
        return load_spec_text(text, "fuzz.yaml")
    except SpecError as exc:
        return str(exc)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml: one parser only")
@FUZZ_REAL
@given(text=st.one_of(mutated_text(SPEC_TEXTS), st.text(max_size=200)))
@example(text="a: 1 \t\n")  # libyaml takes a tab after a value
@example(text="- {step: n?after_reset, of: r}\n")  # libyaml takes "?" inside a flow plain scalar
def test_libyaml_and_the_pure_python_parser_load_the_same(text):
    """The loader parses with libyaml and falls back to the pure-Python parser on any error: a
    text libyaml accepts must load to what the pure-Python parser makes of it, or fail the same."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _outcome(text, True, monkeypatch) == _outcome(text, False, monkeypatch)


SPEC_WORDS = st.sampled_from(
    [
        "format",
        "specs",
        "id",
        "title",
        "tag",
        "points",
        "visibility",
        "explanation",
        "hint",
        "cases",
        "description",
        "steps",
        "checks",
        "call",
        "build",
        "method",
        "read",
        "set",
        "mutate",
        "of",
        "as",
        "args",
        "kwargs",
        "ops",
        "array",
        "shape",
        "dtype",
        "seed",
        "values",
        "launches",
        "output",
        "value",
        "raises",
        "static_buffer",
        "witness",
        "equals",
        "oracle",
        "step",
        "add",
        "mul",
        "relu",
        "matmul",
        "attention",
        "GraphRunner",
        "run_eager",
        "fuse_elementwise",
        "float32",
        "shape-cache",
        "hidden",
        "visible",
        "runner",
        "x",
    ]
)
SPEC_SCALARS = (
    st.none() | st.booleans() | st.integers(-5, 2**40) | st.floats(allow_nan=True) | SPEC_WORDS | st.text(max_size=10)
)
SPEC_TREES = st.recursive(
    SPEC_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(SPEC_WORDS, inner, max_size=6),
    max_leaves=40,
)


@FUZZ
@given(SPEC_TREES)
def test_spec_loader_structured_documents(tree):
    _load(yaml.safe_dump(tree, allow_unicode=True))


@pytest.mark.slow
@FUZZ_REAL
@given(st.data())
def test_spec_loader_mutated_structure(data):
    """A real spec, parsed, with one node of its tree mutated, dumped back."""
    tree = yaml.safe_load(data.draw(st.sampled_from(SPEC_TEXTS)))
    _load(yaml.safe_dump(data.draw(mutated_json(tree)), allow_unicode=True))


# ------------------------------------------------------------------ the report reader
def _sample_report() -> dict:
    from grader.judging.results import CaseResult, CheckLine, LaunchPoint, SpecSummary, StepLine

    case = CaseResult(
        spec="s",
        case="c",
        tag="eager",
        status="failed",
        score=0.0,
        max_score=1.0,
        message="m",
        steps=(StepLine(0, "call run_eager(ops, x)", "returned float32[2]"),),
        checks=(CheckLine(0, "launches", "1", "2", False),),
        launches=(LaunchPoint(0, "call", 1, 2),),
        output_tail="out",
    )
    specs = (
        SpecSummary(
            id="s",
            title="t",
            tag="eager",
            points=1.0,
            visibility="visible",
            explanation="e",
            hint="h",
            score=0.0,
            max_score=1.0,
        ),
    )
    return json.loads(
        json.dumps(report_to_json(Report(submission="sub", score=0.0, max_score=1.0, cases=(case,), specs=specs)))
    )


def _report(data) -> None:
    try:
        report = report_from_json(data)
    except ReportError as exc:
        _one_line(exc)
    else:
        assert isinstance(report, Report)


def test_sample_report_round_trips():
    """The seed the fuzzers mutate is a valid report: it reads back whole and writes out identically
    (so a mutant the reader refuses was refused for the mutation, not for the seed)."""
    data = _sample_report()
    report = report_from_json(data)
    assert (report.submission, report.score, report.max_score) == ("sub", 0.0, 1.0)
    (case,) = report.cases
    assert (case.spec, case.case, case.status, case.output_tail) == ("s", "c", "failed", "out")
    assert case.checks[0].observed == "2" and case.launches[0].observed == 2
    assert json.loads(json.dumps(report_to_json(report))) == data


@FUZZ
@given(JSON_LIKE)
def test_report_reader_random_data(data):
    _report(data)


@FUZZ
@given(st.data())
def test_report_reader_mutated_reports(data):
    _report(data.draw(mutated_json(_sample_report())))


@FUZZ
@given(st.binary(max_size=300) | mutated_text([json.dumps(_sample_report())]).map(str.encode))
def test_read_report_random_files(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("reports") / "report.json"
    path.write_bytes(raw)
    try:
        read_report(path)
    except ReportError as exc:
        _one_line(exc)


# Past Python's int/str digit limit (4300): json.loads raises a bare ValueError, not a JSONDecodeError.
HUGE_INT = "1" * 5000


@pytest.mark.parametrize("field", ["score", "index", "step", "observed", "format"])
def test_report_reader_refuses_integers_out_of_range(field):
    data = _sample_report()
    target = {
        "score": data,
        "format": data,
        "index": data["cases"][0]["steps"][0],
        "step": data["cases"][0]["checks"][0],
        "observed": data["cases"][0]["launches"][0],
    }[field]
    target[field] = 10**5000  # not a float, and not an integer any renderer can print
    with pytest.raises(ReportError) as info:
        report_from_json(data)
    _one_line(info.value)


@pytest.mark.parametrize("text", [f'{{"format": {HUGE_INT}}}', "[" * 100000], ids=["huge-integer", "deep-nesting"])
def test_read_report_of_huge_integers_or_deep_nesting_is_a_report_error(tmp_path, text):
    path = tmp_path / "report.json"
    path.write_text(text)
    with pytest.raises(ReportError) as info:
        read_report(path)
    _one_line(info.value)


# ------------------------------------------------------------------ the protocol, grader side
def _valid_frame() -> bytes:
    encoder = observations.new_encoder()
    import numpy as np

    steps = [
        {
            "index": 0,
            "outcome": "returned",
            "value": encoder.value(np.arange(6, dtype=np.float32).reshape(2, 3)),
            "error": None,
            "launches": 3,
            "witness": [[0, 0, 1234, [2, 3], "float32"]],
            "input_address": 99,
            "graphs": None,
            "note": "",
        },
        {
            "index": 1,
            "outcome": "raised",
            "value": None,
            "error": {"type": "ValueError", "message": "no"},
            "launches": 0,
            "witness": [],
            "input_address": None,
            "graphs": [
                {
                    "key": "(2, 3)",
                    "shape": [2, 3],
                    "entry_id": 1,
                    "static_input_id": 1,
                    "static_input_address": 2,
                    "static_input": encoder.value(np.zeros((2, 3))),
                    "num_ops": 3,
                }
            ],
            "note": "",
        },
    ]
    return observations.encode_observations("spec/case", steps, encoder.blobs)


VALID = _valid_frame()


def _decode(frame: bytes) -> None:
    try:
        body, rest = framing.split_frame(frame)
        if body is None:
            return
        if framing.is_control(body):
            framing.decode_control(body)
        else:
            observations.decode_observations(body, "spec/case", 2)
    except observations.ProtocolError as exc:
        assert str(exc)


def test_valid_frame_decodes():
    body, rest = framing.split_frame(VALID)
    assert rest == b"" and observations.decode_observations(body, "spec/case", 2).steps[1].error.type == "ValueError"


@FUZZ
@given(st.binary(max_size=400))
def test_protocol_random_bytes(raw):
    _decode(raw)
    _decode(struct.pack("<Q", len(raw)) + raw)
    _decode(struct.pack("<Q", len(raw) + 4) + b"GGv1" + raw)
    _decode(struct.pack("<Q", len(raw) + 4) + b"GGc1" + raw)


@FUZZ
@given(st.data())
def test_protocol_mutated_frames(data):
    frame = bytearray(VALID)
    for _ in range(data.draw(st.integers(1, 6))):
        kind = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        i = data.draw(st.integers(0, len(frame) - 1))
        if kind == "flip":
            frame[i] = data.draw(st.integers(0, 255))
        elif kind == "cut":
            del frame[i : i + data.draw(st.integers(1, 16))]
        else:
            frame[i:i] = data.draw(st.binary(min_size=1, max_size=8))
    _decode(bytes(frame))


@FUZZ
@given(st.data())
def test_protocol_mutated_headers(data):
    """The JSON header of a valid frame, mutated as JSON, re-framed around the same blobs."""
    body, _ = framing.split_frame(VALID)
    header_len, blob_count = struct.unpack_from("<II", body, 4)
    header = json.loads(body[12 : 12 + header_len])
    blobs = body[12 + header_len :]
    new = json.dumps(data.draw(mutated_json(header))).encode()
    frame_body = b"GGv1" + struct.pack("<II", len(new), blob_count) + new + blobs
    _decode(struct.pack("<Q", len(frame_body)) + frame_body)


@FUZZ
@given(JSON_LIKE)
def test_protocol_random_control_frames(value):
    body = b"GGc1" + json.dumps(value).encode()
    _decode(struct.pack("<Q", len(body)) + body)


@pytest.mark.parametrize("depth", [10, 1000, 100000])
def test_protocol_deep_nesting(depth):
    header = ("[" * depth + "]" * depth).encode()
    body = b"GGv1" + struct.pack("<II", len(header), 0) + header
    _decode(struct.pack("<Q", len(body)) + body)
    control = b"GGc1" + header
    _decode(struct.pack("<Q", len(control)) + control)


def test_protocol_integer_over_the_digit_limit_is_a_protocol_error():
    """One such integer from a worker once escaped as an internal error and aborted the batch."""
    control = (
        b"GGc1"
        + f'{{"protocol": 1, "kind": "status", "case": "spec/case", "exitcode": {HUGE_INT}, "signal": null}}'.encode()
    )
    with pytest.raises(observations.ProtocolError):
        framing.decode_control(control)
    header = f'{{"protocol": 1, "case": "spec/case", "steps": [{{"index": 0, "outcome": "returned", "value": {HUGE_INT}}}, {{"index": 1, "outcome": "returned"}}]}}'.encode()
    body = b"GGv1" + struct.pack("<II", len(header), 0) + header
    with pytest.raises(observations.ProtocolError):
        observations.decode_observations(body, "spec/case", 2)
    for frame_body in (control, body):
        _decode(struct.pack("<Q", len(frame_body)) + frame_body)


def test_spec_loader_shallow_nesting():
    _load("a: " + "[" * 10 + "]" * 10)


def test_spec_loader_deep_nesting():
    """A pathological nest is one clear, fast error, not a stack overflow or minutes of parsing."""
    for text in ("a: " + "[" * 600 + "]" * 600, "a:\n" + "".join("  " * i + "- \n" for i in range(200))):
        with pytest.raises(SpecError, match="nested more than"):
            load_spec_text(text, "fuzz.yaml")
