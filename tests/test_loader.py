"""Broken spec files each give ONE clear error: ``file:line: path.of.key: what was expected``.

Every broken file is a small edit of one valid file (``BASE``, which loads and
which the reference passes), so each test shows that exactly that edit is
caught. Each is checked through the API (:func:`grader.suite.loader.load_suite`
raising :class:`SpecErrors`) and through the command line (``graphgrade
validate DIR``: non-zero exit, the file and line on stderr, never a traceback).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from grader.commands.validate import validate_suite
from grader.suite import loader
from grader.suite.loader import SpecError, SpecErrors, load_spec_text, load_suite

SHIPPED = Path(__file__).resolve().parents[1] / "specs"

BASE = """\
# yaml-language-server: $schema=./schema.json
format: 1
specs:
  - id: demo
    title: Demo spec
    tag: eager
    points: 5
    visibility: visible
    explanation: Explains the behaviour.
    hint: Points at the code.
    cases:
      - id: replay-one
        description: Capture, then one replay.
        steps:
          - build: GraphRunner
            as: runner
            args: [{ops: [relu, {add: 1.5}, tanh]}]
          - call: runner
            as: first
            args: [{array: {shape: [4, 8], dtype: float32, seed: 1}}]
          - call: runner
            as: second
            args: [{array: {shape: [4, 8], dtype: float32, seed: 2}}]
        checks:
          - launches: {step: first, equals: 3}
          - launches: {step: second, equals: 1}
          - output: {step: second, oracle: true}
"""

# The case of BASE, from its "- id:" line to the end (to duplicate it).
CASE_BLOCK = BASE[BASE.index("      - id: replay-one") :]
# The spec of BASE, from its "- id:" line to the end (to duplicate it).
SPEC_BLOCK = BASE[BASE.index("  - id: demo") :]

STATE_MACHINE_CASE = """\
      - id: machine
        description: A state machine.
        steps:
          - build: InferenceGraphCapture
            as: sm
            args: [1]
            kwargs: {enabled: true}
          - method: advance
            of: sm
            as: step1
        checks:
          - step_mode: {of: sm, equals: CAPTURE, after: step1}
"""


def edit(old: str, new: str, text: str = BASE) -> str:
    """``text`` with the one occurrence of ``old`` replaced (fails loudly if the edit does not apply)."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the ``nth`` occurrence of ``needle`` in ``text``."""
    pos = -1
    for _ in range(nth):
        pos = text.index(needle, pos + 1)
    return text.count("\n", 0, pos) + 1


def graphgrade(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("graphgrade")
    cmd = [exe] if exe else [sys.executable, "-m", "grader.commands.cli"]
    return subprocess.run([*cmd, *args], check=False, capture_output=True, text=True, timeout=300)


@dataclass(frozen=True)
class Broken:
    name: str
    content: str | bytes
    line: int
    fragments: tuple[str, ...]  # each must appear in the error (path of the key, what was expected)

    def write(self, directory: Path, filename: str = "broken.yaml") -> Path:
        path = directory / filename
        if isinstance(self.content, bytes):
            path.write_bytes(self.content)
        else:
            path.write_text(self.content, encoding="utf-8")
        return path


def _broken() -> list[Broken]:
    cases: list[Broken] = []

    def add(name: str, content: str | bytes, line: int, *fragments: str) -> None:
        cases.append(Broken(name, content, line, fragments))

    text = edit("    title: Demo spec", "     title: Demo spec")
    add("yaml-syntax", text, 5, "indented more than the line above it", "same column")

    text = edit("    hint: Points at the code.\n", "    hint: Points at the code.\n    colour: red\n")
    add(
        "unknown-key",
        text,
        line_of(text, "colour"),
        "specs[0].colour",
        "unknown key",
        "expected one of",
        "explanation, hint, cases",
    )

    text = edit("points: 5", 'points: "ten"')
    add("wrong-type-points", text, 7, "specs[0].points", "expected a number", "'ten'")

    text = edit("points: 5", "points: 0")
    add("points-not-positive", text, 7, "specs[0].points", "expected a positive number")

    text = BASE + SPEC_BLOCK
    add(
        "duplicate-spec-id",
        text,
        line_of(text, "  - id: demo", 2),
        "specs[1].id",
        "duplicate spec id 'demo'",
        "first at line 4",
    )

    text = BASE + CASE_BLOCK
    add(
        "duplicate-case-id",
        text,
        line_of(text, "- id: replay-one", 2),
        "specs[0].cases[1].id",
        "duplicate case id 'replay-one'",
        "first at line 12",
    )

    text = edit("[relu, {add", "[gelu, {add")
    add(
        "unknown-op",
        text,
        17,
        "specs[0].cases[0].steps[0].args[0].ops[0]",
        "unknown op 'gelu'",
        "expected one of: add, mul, relu",
    )

    text = edit("{add: 1.5}", "add")
    add(
        "op-missing-argument",
        text,
        17,
        "specs[0].cases[0].steps[0].args[0].ops[1]",
        "op 'add' needs a number",
        "{add: ...}",
    )

    text = edit("{add: 1.5}", "{add: }")
    add("op-empty-argument", text, 17, "ops[1].add", "expected a number")

    text = edit("{ops: [relu, {add: 1.5}, tanh]}", "{ops: [{relu: 2}, {add: 1.5}, tanh]}")
    add("op-unexpected-argument", text, 17, "ops[0].relu", "takes no argument")

    text = edit("- launches: {step: first", "- launchez: {step: first")
    add(
        "unknown-check-kind",
        text,
        25,
        "specs[0].cases[0].checks[0]",
        "unknown check kind 'launchez'",
        "expected one of: launches, output",
    )

    text = edit("    tag: eager\n", "")
    add("missing-tag", text, 4, "specs[0]", "missing required key 'tag'")

    text = edit("tag: eager", "tag: eagre")
    add("unknown-tag", text, 6, "specs[0].tag", "unknown behaviour tag 'eagre'", "launch-counter", "state-machine")

    text = edit("visibility: visible", "visibility: secret")
    add(
        "unknown-visibility",
        text,
        8,
        "specs[0].visibility",
        "unknown visibility 'secret'",
        "hidden",
        "after_due_date",
        "after_published",
    )

    text = edit("          - call: runner\n            as: first", "          - call: runnr\n            as: first")
    add("undefined-call-target", text, 18, "specs[0].cases[0].steps[1].call", "'runnr'", "an earlier step's name")

    text = edit("{array: {shape: [4, 8], dtype: float32, seed: 2}}", "{ref: nothing}")
    add("undefined-ref", text, 23, "specs[0].cases[0].steps[2].args[0].ref", "no earlier step is named 'nothing'")

    text = edit("{step: second, equals: 1}", "{step: third, equals: 1}")
    add("check-names-undefined-step", text, 26, "specs[0].cases[0].checks[1].launches.step", "no step is named 'third'")

    text = BASE + "          - num_captured: {on: runner, equals: 1}\n"
    add(
        "on-instead-of-of-in-check",
        text,
        line_of(text, "{on: runner"),
        "checks[3].num_captured",
        "'on' reads as True",
        "documented key name",
    )

    text = edit(
        "            as: second\n", "            as: second\n          - method: reset\n            on: LaunchCounter\n"
    )
    add(
        "on-instead-of-of-in-step",
        text,
        line_of(text, "on: LaunchCounter"),
        "specs[0].cases[0].steps[3]",
        "'on' reads as True",
    )

    text = edit("    hint: Points at the code.\n", "    hint: Points at the code.\n    hint: Again.\n")
    add("duplicate-yaml-key", text, line_of(text, "hint: Again."), "specs[0].hint", "duplicate key")

    add("empty-file", "", 1, "the file is empty", "format: 1")
    add("comments-only", "# nothing here yet\n\n", 1, "the file is empty")
    add("not-utf8", "format: 1\nspecs:\n  - id: caf\xe9\n".encode("latin-1"), 1, "not UTF-8")

    text = edit("format: 1", "format: 2")
    add("format-2", text, 2, "format", "reads format 1", "says 2")

    text = edit(
        "          - call: runner\n            as: second\n            args: [{array: {shape: [4, 8], dtype: float32, seed: 2}}]\n",
        "          - read: n\n            of: LaunchCounter\n            as: count\n          - call: runner\n            as: second\n            args: [{ref: count}]\n",
    )
    add(
        "oracle-on-unknown-input",
        text,
        line_of(text, "oracle: true"),
        "checks[2].output.oracle",
        "step 'second'",
        "no oracle is known",
    )

    text = edit("build: GraphRunner", "build: PiecewiseGraphRunner")
    text = edit(
        "args: [{ops: [relu, {add: 1.5}, tanh]}]",
        "args: [{ops: [relu, {add: 1.5}, tanh]}, {capturable: [true, true, true]}]",
        text,
    )
    text += "          - static_buffer: {of: runner, steps: [first, second]}\n"
    add(
        "static-buffer-on-piecewise",
        text,
        line_of(text, "static_buffer"),
        "checks[3].static_buffer.of",
        "PiecewiseGraphRunner",
        "got 'runner'",
    )

    text = edit(CASE_BLOCK, STATE_MACHINE_CASE)
    text = edit("equals: CAPTURE", "equals: capture", text)
    add(
        "unknown-step-mode",
        text,
        line_of(text, "step_mode"),
        "checks[0].step_mode.equals",
        "unknown step mode 'capture'",
        "WARMUP, CAPTURE, REPLAY",
    )

    text = edit("title: Demo spec", "title: !!python/object/apply:os.system [echo hi]")
    add("python-tag", text, 5, "unsupported YAML tag", "python/object")

    text = edit("title: Demo spec", "title: !!python/str Demo spec")
    add("python-tag-on-text", text, 5, "unsupported YAML tag", "python/str")

    text = edit("args: [{ops: [relu, {add: 1.5}, tanh]}]", "args: !!set {a, b}")
    add("set-tag", text, 17, "unsupported YAML tag", "set")

    text = edit("    title: Demo spec\n", "    <<: {title: Demo spec}\n")
    add("merge-key", text, 5, "unsupported YAML tag", "merge")

    text = edit("title: Demo spec", "title: Demo\x00spec")
    add("control-character", text, 5, "YAML error", "not allowed")

    text = edit("{array: {shape: [4, 8], dtype: float32, seed: 2}}", "{array: {values: ['1.5', '2.0']}}")
    add("array-values-strings", text, 23, "steps[2].args[0].array.values", "finite float32 numbers")

    text = edit("{array: {shape: [4, 8], dtype: float32, seed: 2}}", "{array: {values: [1.0e+39, 2.0]}}")
    add("array-values-overflow-float32", text, 23, "array.values", "finite float32 numbers")

    text = edit("{array: {shape: [4, 8], dtype: float32, seed: 2}}", "{array: {values: [[1.0, 2.0], [3.0]]}}")
    add("array-values-ragged", text, 23, "array.values", "rectangular")

    text = edit("{array: {shape: [4, 8], dtype: float32, seed: 2}}", "{array: {shape: [4096, 4096]}}")
    add("array-too-large", text, 23, "array.shape", "at most 65536 elements")

    text = edit("{step: second, oracle: true}", "{step: second, oracle: true, dtype: float16}")
    add("output-unknown-dtype", text, 27, "checks[2].output.dtype", "unknown dtype 'float16'")

    text = edit("equals: 3}", "equals: -3}")
    add("launches-negative", text, 25, "checks[0].launches.equals", "expected an integer >= 0")

    text = edit("{step: first, equals: 3}", "{step: runner, equals: 3}")
    text = edit(
        "- launches: {step: runner, equals: 3}", "- witness: {of: runner, capture: second, replay: first}", text
    )
    add("witness-replay-before-capture", text, 25, "checks[0].witness.replay", "must come after the capture step")

    text = edit(
        "{step: second, oracle: true}",
        "{step: second, oracle: true}\n          - witness: {of: runner, capture: first, replay: second, op: 3}",
    )
    add("witness-op-out-of-range", text, 28, "witness.op", "has only 3 ops")

    text = BASE + "          - padded_rows: {of: runner, steps: [second]}\n"
    add(
        "padded-rows-without-capture-sizes",
        text,
        line_of(text, "padded_rows"),
        "checks[3].padded_rows.of",
        "capture_sizes",
    )

    text = edit(
        "args: [{ops: [relu, {add: 1.5}, tanh]}]",
        "args: [{ops: [relu, {add: 1.5}, tanh]}]\n            kwargs: {capture_sizes: [4, 8]}",
    )
    text += "          - padded_rows: {of: runner, steps: [second]}\n"
    add(
        "padded-rows-on-a-full-batch",
        text,
        line_of(text, "padded_rows"),
        "checks[3].padded_rows.steps[0]",
        "fills its buffer",
    )

    text = edit(
        "args: [{ops: [relu, {add: 1.5}, tanh]}]",
        "args: [{ops: [relu, {add: 1.5}, tanh]}]\n            kwargs: {capture_sizes: [8]}",
    )
    text += "          - padded_rows: {of: runner, steps: [second], op: 5}\n"
    add("padded-rows-op-out-of-range", text, line_of(text, "padded_rows"), "padded_rows.op", "has only 3 ops")

    # A key holding a newline (or another unprintable character) still gives a one-line error.
    text = edit("    hint: Points at the code.\n", '    hint: Points at the code.\n    "a\\nb\\tc": red\n')
    add("key-with-newline", text, line_of(text, '"a'), "specs[0].a\\nb\\tc", "unknown key")

    # Integers past Python's int/str digit limit (4300) once escaped as a bare ValueError.
    text = edit("points: 5", "points: " + "1" * 5000)
    add("integer-over-the-digit-limit", text, 7, "more than 300 digits")

    text = edit("format: 1", "format: 0x" + "f" * 5000)
    add("hex-integer-too-long-to-print", text, 2, "more than 300 digits")
    return cases


BROKEN = _broken()


# ------------------------------------------------------------------ the valid starting point
def test_base_file_loads_and_the_reference_passes_it(tmp_path):
    (tmp_path / "demo.yaml").write_text(BASE)
    loaded = load_suite(tmp_path)
    (case,) = loaded.suite.cases
    assert case.uid == "demo/replay-one"
    assert case.line == line_of(BASE, "- id: replay-one")
    assert loaded.suite.specs[0].line == 4
    problems, _ = validate_suite(tmp_path)
    # A one-file directory lacks most tags; apart from that the reference passes it.
    assert [p for p in problems if "behaviour tag" not in p] == []


def test_the_broken_variants_differ_and_are_named_uniquely():
    assert len({b.name for b in BROKEN}) == len(BROKEN) >= 30
    assert len({b.content for b in BROKEN}) == len(BROKEN)


# ------------------------------------------------------------------ API
@pytest.mark.parametrize("broken", BROKEN, ids=[b.name for b in BROKEN])
def test_api_gives_one_error_naming_file_line_key_and_expectation(tmp_path, broken):
    path = broken.write(tmp_path)
    with pytest.raises(SpecErrors) as info:
        load_suite(tmp_path)
    errors = info.value.errors
    assert len(errors) == 1, [str(e) for e in errors]
    (error,) = errors
    assert isinstance(error, SpecError)
    message = str(error)
    assert "\n" not in message, "an error is one line"
    assert message.startswith(f"{path}:{broken.line}: "), f"expected {path}:{broken.line}, got: {message}"
    for fragment in broken.fragments:
        assert fragment in message, f"{fragment!r} missing from: {message}"
    assert "Traceback" not in message


# ------------------------------------------------------------------ command line
def check_cli_output(broken: Broken, path: Path, returncode: int, stdout: str, stderr: str) -> None:
    assert returncode != 0
    assert "Traceback" not in stderr + stdout
    assert "internal error" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    located = [line for line in lines if f"{path}:{broken.line}: " in line]
    assert len(located) == 1, stderr
    for fragment in broken.fragments:
        assert fragment in located[0], f"{fragment!r} missing from: {located[0]}"


@pytest.mark.parametrize("broken", BROKEN, ids=[b.name for b in BROKEN])
def test_cli_validate_reports_the_error_without_a_traceback(tmp_path, capsys, broken):
    """``graphgrade validate DIR``'s entry point, called in this process (a process start per
    broken file cost 90 s of the suite); the same entry point in its own process, as a user
    runs it, is test_cli_validate_in_its_own_process below."""
    from grader.commands.cli import main

    path = broken.write(tmp_path)
    returncode = main(["validate", str(tmp_path)])
    out = capsys.readouterr()
    check_cli_output(broken, path, returncode, out.out, out.err)


# A fixed sample, each failing at a different layer: the YAML parser, the bytes' decoding, the
# safe loader's refusal of a Python tag, and Python's own limit on integer digits.
IN_ITS_OWN_PROCESS = ("yaml-syntax", "not-utf8", "python-tag", "integer-over-the-digit-limit")


@pytest.mark.parametrize("broken", [b for b in BROKEN if b.name in IN_ITS_OWN_PROCESS], ids=IN_ITS_OWN_PROCESS)
def test_cli_validate_in_its_own_process(tmp_path, broken):
    """The sample above through a real ``graphgrade validate`` process: its exit status, and
    nothing on stdout or stderr but the one located line (no traceback, no warning)."""
    path = broken.write(tmp_path)
    result = graphgrade("validate", str(tmp_path))
    check_cli_output(broken, path, result.returncode, result.stdout, result.stderr)


# ------------------------------------------------------------------ across files
def test_duplicate_spec_id_across_files_names_both(tmp_path):
    (tmp_path / "a.yaml").write_text(BASE)
    (tmp_path / "b.yaml").write_text(BASE.replace("- id: replay-one", "- id: another-case"))
    with pytest.raises(SpecErrors) as info:
        load_suite(tmp_path)
    (error,) = info.value.errors
    message = str(error)
    assert message.startswith(f"{tmp_path / 'b.yaml'}:4: specs[0].id: duplicate spec id 'demo'"), message
    assert f"{tmp_path / 'a.yaml'}:4" in message

    result = graphgrade("validate", str(tmp_path))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert f"{tmp_path / 'b.yaml'}:4:" in result.stderr and "duplicate spec id 'demo'" in result.stderr


def test_every_broken_file_is_reported_not_only_the_first(tmp_path):
    chosen = {b.name: b for b in BROKEN}
    picks = ["unknown-key", "unknown-op", "not-utf8", "format-2", "on-instead-of-of-in-check", "empty-file"]
    paths = {name: chosen[name].write(tmp_path, f"{i:02d}_{name}.yaml") for i, name in enumerate(picks)}
    (tmp_path / "99_fine.yaml").write_text(BASE.replace("id: demo", "id: fine"))
    with pytest.raises(SpecErrors) as info:
        load_suite(tmp_path)
    messages = [str(e) for e in info.value.errors]
    assert len(messages) == len(picks), messages
    for name, path in paths.items():
        assert any(m.startswith(f"{path}:{chosen[name].line}: ") for m in messages), (name, messages)
    assert not any("99_fine.yaml" in m for m in messages)

    result = graphgrade("validate", str(tmp_path))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    for name, path in paths.items():
        assert f"{path}:{chosen[name].line}: " in result.stderr, (name, result.stderr)
    assert f"{len(picks)} problem(s)" in result.stdout + result.stderr


def test_a_directory_without_spec_files_is_one_error(tmp_path):
    with pytest.raises(SpecErrors) as info:
        load_suite(tmp_path)
    assert len(info.value.errors) == 1 and "no *.yaml spec files" in str(info.value.errors[0])
    with pytest.raises(SpecErrors):
        load_suite(tmp_path / "missing")


def test_deep_nesting_is_an_error_not_a_crash(tmp_path):
    (tmp_path / "deep.yaml").write_text("format: 1\nspecs: " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(SpecErrors) as info:
        load_suite(tmp_path)
    (error,) = info.value.errors
    assert str(error).startswith(f"{tmp_path / 'deep.yaml'}:")


# ------------------------------------------------------------------ the reference must pass every case
def test_a_case_the_reference_fails_is_reported_by_validate(tmp_path):
    text = edit("{step: second, equals: 1}", "{step: second, equals: 2}")
    path = tmp_path / "wrong.yaml"
    path.write_text(text)
    load_suite(tmp_path)  # the file itself is well-formed
    problems, summary = validate_suite(tmp_path)
    check_line = line_of(text, "{step: second, equals: 2}")  # the failing check's line, not the case's
    assert check_line != line_of(text, "- id: replay-one")
    mine = [p for p in problems if p.startswith(f"{path}:{check_line}: demo/replay-one: ")]
    assert len(mine) == 1, problems
    assert "reference fails this case" in mine[0] and "should cost 2 launches but cost 1" in mine[0]
    assert "problem(s)" in summary

    result = graphgrade("validate", "--specs", str(tmp_path))
    assert result.returncode == 2  # a spec the reference fails is a bad spec
    assert "Traceback" not in result.stderr
    assert f"{path}:{check_line}: demo/replay-one: " in result.stderr


def test_validate_of_a_passing_directory_reports_only_the_missing_tags(tmp_path):
    (tmp_path / "demo.yaml").write_text(BASE)
    problems, _ = validate_suite(tmp_path)
    assert len(problems) == 1 and "no spec covers the behaviour tag(s)" in problems[0]
    assert "eager" not in problems[0].split("tag(s)")[1].split(", ")


# ------------------------------------------------------------------ what the loader derives
def test_capture_sizes_that_are_not_integers_do_not_crash_the_loader():
    text = edit("args: [{ops: [relu, {add: 1.5}, tanh]}]", "args: [{ops: [relu, {add: 1.5}, tanh]}, [a, [1]]]")
    spec_file = load_spec_text(text, "sizes.yaml")
    assert spec_file.specs[0].cases[0].id == "replay-one"


def test_static_buffer_shape_is_padded_to_the_capture_sizes():
    text = edit(
        "args: [{ops: [relu, {add: 1.5}, tanh]}]",
        "args: [{ops: [relu, {add: 1.5}, tanh]}]\n            kwargs: {capture_sizes: [8, 2, 4]}",
    )
    text = edit("shape: [4, 8], dtype: float32, seed: 1", "shape: [3, 8], dtype: float32, seed: 1", text)
    text += "          - static_buffer: {of: runner, steps: [first, second]}\n"
    (case,) = load_spec_text(text, "pad.yaml").specs[0].cases
    (check,) = [c for c in case.checks if type(c).__name__ == "StaticBufferCheck"]
    assert check.buffer_shape == (4, 8)
    assert all(case.steps[i].observe_graphs for i in check.steps)


def test_implicit_reads_are_placed_after_their_anchor():
    text = edit(CASE_BLOCK, STATE_MACHINE_CASE)
    (case,) = load_spec_text(text, "sm.yaml").specs[0].cases
    labels = [(s.action, s.target, s.implicit) for s in case.steps]
    assert labels == [
        ("build", "InferenceGraphCapture", False),
        ("method", "advance", False),
        ("method", "step_mode", True),
    ]
    (check,) = case.checks
    assert check.step == 2 and check.enum and check.equals == "CAPTURE"


def test_yaml_anchors_and_aliases_are_refused_on_their_line(tmp_path):
    text = BASE.replace("format: 1", "format: 1\nshared: &ops [relu]", 1)
    (tmp_path / "a.yaml").write_text(text)
    with pytest.raises(SpecErrors) as info:
        load_suite(tmp_path)
    (error,) = info.value.errors
    assert str(error).startswith(f"{tmp_path / 'a.yaml'}:{line_of(text, '&ops')}: ") and "anchors and aliases" in str(
        error
    )


def _loaded_with(monkeypatch, text: str, libyaml_loader):
    """The spec text loaded with libyaml's loader (None: the pure-Python parser alone), or the error."""
    monkeypatch.setattr(loader, "_LIBYAML_LOADER", libyaml_loader)
    try:
        return load_spec_text(text, "same.yaml")
    except SpecError as exc:
        return str(exc)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml: one parser only")
@pytest.mark.parametrize(
    "name",
    [b.name for b in BROKEN if isinstance(b.content, str)] + [p.name for p in sorted(SHIPPED.glob("*.yaml"))],
)
def test_libyaml_and_the_pure_python_parser_give_the_same_file_or_error(name, monkeypatch):
    """The loader parses with libyaml where PyYAML has it and falls back to the pure-Python
    parser on any error: every broken file reads the same, every shipped file loads the same."""
    broken = {b.name: b for b in BROKEN}
    text = broken[name].content if name in broken else (SHIPPED / name).read_text(encoding="utf-8")

    with_libyaml = _loaded_with(monkeypatch, text, yaml.CSafeLoader)
    assert with_libyaml == _loaded_with(monkeypatch, text, None)
    assert isinstance(with_libyaml, str) == (name in broken)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml: one parser only")
def test_a_block_scalar_header_with_a_comment_and_no_space_fails_with_or_without_libyaml(monkeypatch):
    """libyaml takes "hint: >-#why" (a comment glued to a block scalar's indicators), the
    pure-Python parser refuses it: such text goes to the pure-Python parser, so the file fails
    the same wherever it is read."""
    text = (SHIPPED / "01_launch_counter.yaml").read_text(encoding="utf-8")
    assert "    hint: >-\n" in text
    text = text.replace("    hint: >-\n", "    hint: >-#why\n", 1)

    with_libyaml = _loaded_with(monkeypatch, text, yaml.CSafeLoader)
    assert (
        with_libyaml == _loaded_with(monkeypatch, text, None)
        and "expected chomping or indentation indicators" in with_libyaml
    )
