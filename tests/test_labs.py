"""Labs as packs (issue 32): the engine reads a lab from its lab.yaml, names none, and grades a
second lab (labs/decode_step) through the same path as the default one."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import yaml

from grader.lab import activate, active, load_lab
from grader.lab.loading import LabError, default_lab_root, pack_attribute

ROOT = Path(__file__).resolve().parents[1]
LABS = ROOT / "labs"
ENGINE = [ROOT / "grader", ROOT / "reports"]
DECODE_STEP = LABS / "decode_step"


def _own_names(lab_dir: Path) -> tuple[set[str], set[str]]:
    """(identifiers, behaviour ids) a lab declares as its own: its module, entry points, provided
    objects and own check kinds; and its behaviours' ids."""
    data = yaml.safe_load((lab_dir / "lab.yaml").read_text(encoding="utf-8"))
    names = {data["student"]["module"]}
    names |= {e["name"] for e in data["student"].get("entry_points", [])}
    names |= {p["name"] for p in data.get("provided", []) or []}
    names |= {c["kind"] for c in (data.get("checks") or {}).get("own", []) or []}
    return names, {b["id"] for b in data["behaviours"]}


def engine_files() -> list[Path]:
    """The engine: grader/ (but the lab package's own code, which reads lab.yaml) and reports/."""
    return sorted(
        p
        for folder in ENGINE
        for p in folder.rglob("*")
        if p.suffix in (".py", ".j2") and (ROOT / "grader" / "lab") not in p.parents
    )


def names_in_engine(names: set[str], tags: set[str]) -> dict[str, set[str]]:
    """Engine file -> the names of ``names`` it spells as a word, and of ``tags`` as a quoted literal."""
    words = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, sorted(names))) + r")(?![\w-])")
    quoted = re.compile(r"""["'](""" + "|".join(map(re.escape, sorted(tags))) + r""")["']""")
    found: dict[str, set[str]] = {}
    for path in engine_files():
        text = path.read_text(encoding="utf-8")
        hits = set(words.findall(text)) | set(quoted.findall(text))
        if hits:
            found[path.relative_to(ROOT).as_posix()] = hits
    return found


def test_the_engine_names_nothing_of_the_decode_step_lab():
    names, tags = _own_names(DECODE_STEP)
    default_names, default_tags = _own_names(default_lab_root())
    assert "DecodeLoop" in names and "decode-loop" in tags
    # names both labs declare (StepMode, InferenceGraphCapture) are counted with the default lab below
    assert names_in_engine(names - default_names, tags - default_tags) == {}


# The engine files that still name the default lab (its module, classes, functions or tags): none
# (its op vocabulary, check kinds and snapshot fields are its pack's and its lab.yaml's). A file
# that starts naming the lab fails: ask the lab instead.
DEFAULT_LAB_NAMED_IN: set[str] = set()


def test_the_engine_files_naming_the_default_lab_only_shrink():
    names, tags = _own_names(default_lab_root())
    found = set(names_in_engine(names, tags))
    assert found - DEFAULT_LAB_NAMED_IN == set(), "these engine files now name the default lab: ask the lab instead"
    assert DEFAULT_LAB_NAMED_IN - found == set(), "these no longer name the default lab: take them off the list"


def test_the_default_lab_is_the_one_labs_default_names():
    assert default_lab_root() == LABS / (LABS / "DEFAULT").read_text(encoding="utf-8").strip()
    lab = load_lab()
    assert lab.paths.specs == ROOT / "specs" and lab.paths.reference == ROOT / "reference" / "cudagraph.py"


def test_both_labs_load_and_declare_what_their_specs_use():
    for folder in (default_lab_root(), DECODE_STEP):
        lab = load_lab(folder)
        assert lab.tags and lab.core_tags and set(lab.core_tags) < set(lab.tags)
        assert lab.paths.specs.is_dir() and lab.paths.reference.is_file()
    decode = load_lab(DECODE_STEP)
    assert decode.launch_counter is None and decode.values == ("plain", "ref")
    assert decode.buildable == ("InferenceGraphCapture", "DecodeConfig", "DecodeLoop", "FakeDecodeEngine")
    assert "fail_capture" in decode.kwarg_names and decode.step_mode_enum == "StepMode"
    assert all(e.binds is None for e in decode.entry_points)
    default = load_lab()  # what its spec loader knows of a step's binding, and where the step's args are
    assert {e.name: e.binds for e in default.entry_points if e.binds} == {
        "GraphRunner": "runner",
        "PiecewiseGraphRunner": "runner",
        "run_eager": "result",
        "fuse_elementwise": "ops",
    }
    assert default.entry_point("PiecewiseGraphRunner").position("capture_sizes") == 2
    assert default.entry_point("GraphRunner").position("is_capturable") is None
    # the handout's floor on the state machine's warm-up (lab.yaml: at_least): what an argument is due to be
    machine = default.entry_point("InferenceGraphCapture")
    assert [machine.due("warmup_steps", n) for n in (-5, 0, 1, 3)] == [1, 1, 1, 3]
    assert machine.due("enabled", True) is None and default.entry_point("GraphRunner").due("warmup_steps", 0) is None


@pytest.mark.parametrize(
    "text, problem",
    [
        ("format: 2\n", "format: expected 1"),
        ("format: 1\nid: x\n", "missing the required key 'title'"),
        ("[1, 2]\n", "expected a mapping"),
        (
            "format: 1\nid: x\ntitle: t\nstudent: {module: m}\nbehaviours: []\nspecs: s\nreference: r\nzzz: 1\n",
            "zzz: unknown key",
        ),
        (
            "format: 1\nid: x\ntitle: t\nstudent: {module: 3}\nbehaviours: [{id: a, title: A, part: core}]\nspecs: s\nreference: r\n",
            "student.module",
        ),
        (
            "format: 1\nid: x\ntitle: t\nstudent: {module: m}\nbehaviours: [{id: a, title: A, part: middle}]\nspecs: s\nreference: r\n",
            "behaviours[0].part: expected one of core, stretch",
        ),
        (
            "format: 1\nid: x\ntitle: t\nstudent: {module: m}\nbehaviours: [{id: a, title: A, part: core}]\nspecs: s\nreference: r\npack: nowhere\n",
            "pack: nowhere is not a folder",
        ),
        (
            "format: 1\nid: x\ntitle: t\nstudent: {module: m, entry_points: [{name: f, kind: function, binds: runner, params: [ops]}]}\n"
            "behaviours: [{id: a, title: A, part: core}]\nspecs: s\nreference: r\n",
            "student.entry_points[0].binds: runner: a runner is a buildable class",
        ),
        (
            "format: 1\nid: x\ntitle: t\nstudent: {module: m, entry_points: [{name: f, kind: function, binds: ops, params: [x]}]}\n"
            "behaviours: [{id: a, title: A, part: core}]\nspecs: s\nreference: r\n",
            "student.entry_points[0].params: binds ops: expected the parameter 'ops'",
        ),
        (
            "format: 1\nid: x\ntitle: t\nstudent: {module: m, entry_points: [{name: f, kind: function}]}\n"
            "behaviours: [{id: a, title: A, part: core}]\nspecs: s\nreference: r\nprobe: [f]\n",
            "probe[0]: 'f' is not an entry point with binds: runner",
        ),
        (
            "format: 1\nid: x\ntitle: t\nstudent: {module: m, entry_points: [{name: C, kind: class, params: [n],"
            " at_least: {k: 1}}]}\nbehaviours: [{id: a, title: A, part: core}]\nspecs: s\nreference: r\n",
            "student.entry_points[0].at_least: expected a mapping of its params (n) to ints",
        ),
        (
            "format: 1\nid: x\ntitle: t\nstudent: {module: m, entry_points: [{name: C, kind: class, params: [n],"
            " at_least: {n: true}}]}\nbehaviours: [{id: a, title: A, part: core}]\nspecs: s\nreference: r\n",
            "student.entry_points[0].at_least: expected a mapping of its params (n) to ints",
        ),
        ("a: [\n", "not valid YAML"),
    ],
)
def test_a_bad_lab_yaml_is_one_line_naming_the_file_and_the_key(tmp_path, text, problem):
    (tmp_path / "lab.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(LabError) as caught:
        load_lab(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(tmp_path / "lab.yaml")) and problem in message, message


def test_a_missing_lab_says_so(tmp_path):
    with pytest.raises(LabError, match="no such file"):
        load_lab(tmp_path / "nowhere")


def test_a_pack_reference_reaches_only_the_pack_folder(tmp_path):
    lab = load_lab(DECODE_STEP)
    engine_class = pack_attribute(lab, "pack.engine:FakeDecodeEngine")
    assert engine_class.__module__.startswith("_graphgrade_pack_decode_step")  # a private name, not sys.path
    (tmp_path / "lab.yaml").write_text(
        (DECODE_STEP / "lab.yaml").read_text(encoding="utf-8").replace("factory: pack.engine:", "factory: os.path:"),
        encoding="utf-8",
    )
    with pytest.raises(LabError, match=r"provided\[0\]\.factory: expected pack\.MODULE:ATTRIBUTE"):
        load_lab(tmp_path)


_MINIMAL = "format: 1\nid: x\ntitle: t\nstudent: {module: m}\nbehaviours: [{id: a, title: A, part: core}]\nspecs: s\nreference: r\n"


@pytest.mark.parametrize(
    "extra, problem",
    [
        ("values: [plain, ops]\n", "ops: missing: values has ops"),
        ("ops: pack.ops\nvalues: [plain]\n", "ops: given, but values has no ops"),
        ("ops: os.path\n", "ops: expected a name"),
        ("snapshot: {of: graphs}\n", "snapshot: missing the required key 'fields'"),
        (
            "snapshot: {of: graphs, fields: {a: tensor}}\n",
            "snapshot.fields.a: expected one of shape, int, array, buffer",
        ),
        ("snapshot: {of: graphs, fields: {key: int}}\n", "snapshot.fields: two fields"),
        ("snapshot: {of: graphs, fields: {b: buffer, b_id: int}}\n", "snapshot.fields: two fields"),
        ("snapshot: {of: 3, fields: {a: int}}\n", "snapshot.of: expected a name"),
        ("snapshot: {of: graphs, fields: {fields: int}}\n", "snapshot.fields.fields: a field may not be named"),
        ("snapshot: {of: graphs, fields: {__dict__: int}}\n", "snapshot.fields.__dict__: a field may not be named"),
    ],
)
def test_the_op_vocabulary_and_the_snapshot_keys_are_checked(tmp_path, extra, problem):
    (tmp_path / "lab.yaml").write_text(_MINIMAL + extra, encoding="utf-8")
    with pytest.raises(LabError) as caught:
        load_lab(tmp_path)
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"{tmp_path / 'lab.yaml'}: ") and problem in text


def test_the_default_lab_declares_its_ops_and_snapshot_and_the_other_lab_neither():
    default, decode = load_lab(), load_lab(DECODE_STEP)
    assert default.ops == "pack.ops" and decode.ops is None and "ops" not in decode.values
    assert [(f.name, f.kind) for f in default.snapshot.fields] == [
        ("static_input", "buffer"),
        ("shape", "shape"),
        ("num_ops", "int"),
        ("output", "array"),
    ]
    assert decode.snapshot is None
    from grader.lab import op_vocabulary

    vocabulary = op_vocabulary(default)
    assert op_vocabulary(decode) is None and op_vocabulary(load_lab()) is vocabulary  # loaded once
    assert vocabulary.module.__name__ == "_graphgrade_pack_cudagraph.ops"  # by path, a private name
    assert "matmul" in vocabulary.names and vocabulary.takes("add") == "number"


_PARTS = "apply_chain = make_ops = case_op_place = class_change = take_changes_seen = print\nWitness = GraderOp = int\n"


@pytest.mark.parametrize(
    "lab_id, source, problem",  # each its own lab id: a pack's modules are loaded once per process
    [
        ("vocab-a", "", "defines no apply_chain"),
        ("vocab-b", _PARTS + "OP_KINDS = {}\nGUARDED = (GraderOp, Witness)\n", "OP_KINDS is not a mapping"),
        ("vocab-c", _PARTS + "OP_KINDS = {'relu': 1}\nGUARDED = (GraderOp, Witness)\n", "has no takes"),
        ("vocab-d", _PARTS.replace("= int", "= 3") + "OP_KINDS = GUARDED = 0\n", "Witness is not a class"),
    ],
)
def test_an_op_vocabulary_missing_a_part_is_one_line_naming_the_key(tmp_path, lab_id, source, problem):
    from grader.lab import op_vocabulary

    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pack" / "ops.py").write_text(source, encoding="utf-8")
    (tmp_path / "lab.yaml").write_text(_MINIMAL.replace("id: x", f"id: {lab_id}") + "ops: pack.ops\npack: pack/\n")
    with pytest.raises(LabError) as caught:
        op_vocabulary(load_lab(tmp_path))
    assert str(caught.value).startswith(f"{tmp_path / 'lab.yaml'}: ops: pack.ops ") and problem in str(caught.value)


def test_the_lab_graded_is_the_one_activated():
    before = active()
    try:
        decode = activate(load_lab(DECODE_STEP))
        from grader.suite.checks import lab_check_kinds

        assert lab_check_kinds() == ("value", "raises", "attribute", "step_mode", "engine_calls")
        assert active() is decode
    finally:
        activate(before)
    from grader.suite.checks import lab_check_kinds

    assert "engine_calls" not in lab_check_kinds() and "static_buffer" in lab_check_kinds()


# ------------------------------------------------------------------ the commands, with --lab
def _graphgrade(*args: str, env: dict | None = None, cwd: Path = ROOT):
    import os
    import subprocess
    import sys

    full_env = {k: v for k, v in os.environ.items() if k != "GRAPHGRADE_LAB"}  # the lab: only as given
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=600
    )


def test_validate_with_lab_loads_the_pack_and_its_reference_passes_every_case():
    done = _graphgrade("validate", "--lab", str(DECODE_STEP))
    assert done.returncode == 0, done.stderr
    assert "11 files, 24 specs, 55 cases, 100 points" in done.stdout + done.stderr
    assert "OK on the python reference" in done.stdout
    assert f"specs: {DECODE_STEP / 'specs'} (the specs of the lab given with --lab" in done.stderr


def test_the_lab_may_come_from_the_environment_and_a_bad_one_is_one_line(tmp_path):
    done = _graphgrade("schema", env={"GRAPHGRADE_LAB": str(DECODE_STEP)})
    assert done.returncode == 0 and '"decode-loop"' in done.stdout and '"engine_calls"' in done.stdout
    bad = _graphgrade("validate", "--lab", str(tmp_path))
    assert (
        bad.returncode == 2
        and bad.stderr.strip()
        == f"graphgrade: {tmp_path / 'lab.yaml'}: no such file (a lab is a folder holding lab.yaml)"
    )


def test_a_pack_part_loaded_on_first_use_is_one_line_not_an_internal_error(tmp_path):
    """A lab.yaml that loads but names pack code that is wrong (its ops, step kinds or check
    modules, imported when first used) is the same one line and exit 2 as a bad lab.yaml key."""
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pack" / "ops.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "lab.yaml").write_text(_MINIMAL.replace("id: x", "id: cli-vocab") + "ops: pack.ops\npack: pack/\n")
    done = _graphgrade("schema", "--lab", str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"graphgrade: {tmp_path / 'lab.yaml'}: ops: pack.ops defines no apply_chain (docs/labs.md: the op vocabulary)"
    )


def test_a_command_that_knows_only_the_default_lab_says_so():
    done = _graphgrade("student-kit", "--lab", str(DECODE_STEP))
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == "graphgrade: student-kit knows only the default lab for now, not 'decode-step' (docs/labs.md: what is left to move)"
    )


def test_the_committed_schema_of_the_decode_step_lab_is_the_generated_one():
    import json

    done = _graphgrade("schema", "--lab", str(DECODE_STEP))
    assert json.loads(done.stdout) == json.loads((DECODE_STEP / "specs" / "schema.json").read_text(encoding="utf-8"))


def test_every_decode_step_spec_file_validates_against_its_lab_schema():
    import json

    import jsonschema

    schema = json.loads((DECODE_STEP / "specs" / "schema.json").read_text(encoding="utf-8"))
    for path in sorted((DECODE_STEP / "specs").glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)


_SPEC = """format: 1
specs:
  - id: s
    title: t
    tag: decode-loop
    points: 1
    visibility: visible
    explanation: e
    hint: h
    cases:
      - id: c
        description: d
        steps:
          - build: FakeDecodeEngine
            as: eng
            kwargs: KWARGS
          - build: DecodeConfig
            as: cfg
          - build: DecodeLoop
            as: loop
            args: [{ref: eng}]
            kwargs: {config: {ref: cfg}}
          - method: step
            of: loop
            args: [4, 1]
            as: s0
        checks:
          - CHECK
"""


@pytest.mark.parametrize(
    "kwargs, check, problem",
    [
        ("{fail_runs: [-1]}", "engine_calls: {of: eng, during: s0, equals: [[run, 4, 1]]}", ":16: "),
        ("{}", "engine_calls: {of: eng, during: s0, equals: [[jump, 4]]}", ":28: "),
        ("{}", "engine_calls: {of: cfg, during: s0, equals: []}", "expected the name of a built FakeDecodeEngine"),
        (
            "{}",
            "static_buffer: {of: loop, step: s0}",
            "unknown check kind 'static_buffer' (expected one of: value, raises, attribute, step_mode, engine_calls)",
        ),
        ("{}", "value: {step: s0, equals: {array: {shape: [1]}}}", "expected a plain value"),
    ],
)
def test_the_lab_decides_what_its_specs_may_say(tmp_path, kwargs, check, problem):
    from grader.suite.loader import SpecErrors, load_suite

    (tmp_path / "01.yaml").write_text(_SPEC.replace("KWARGS", kwargs).replace("CHECK", check), encoding="utf-8")
    before = active()
    try:
        activate(load_lab(DECODE_STEP))
        with pytest.raises(SpecErrors) as caught:
            load_suite(tmp_path)
    finally:
        activate(before)
    (error,) = caught.value.errors
    assert str(error).startswith(str(tmp_path / "01.yaml")) and problem in str(error) and "\n" not in str(error), error


def test_the_default_labs_pack_defines_its_own_check_kinds_outside_the_engines_registry():
    from grader.suite.checks import check_class, lab_check_kinds
    from grader.suite.checks.base import REGISTRY

    lab = activate(load_lab(default_lab_root()))
    own = ("launches", "output", "num_captured", "num_graphs", "same_entries", "static_buffer", "entry_output")
    own += ("witness", "padded_rows", "fused_ops", "same_output", "cites")
    assert set(own) <= set(lab_check_kinds()) and not set(own) & set(REGISTRY)  # the pack's, not the engine's
    assert set(REGISTRY) == {"value", "raises", "attribute", "step_mode"}  # what any lab may use
    cls = check_class("launches")
    assert cls.__module__ == "_graphgrade_pack_cudagraph.checks.launches"
    assert Path(__import__("sys").modules[cls.__module__].__file__) == lab.paths.pack / "checks" / "launches.py"
    try:
        activate(load_lab(DECODE_STEP))
        assert "launches" not in lab_check_kinds()
        with pytest.raises(KeyError):
            check_class("launches")
    finally:
        activate(lab)


@pytest.mark.parametrize(
    "module, problem",
    [
        ("from grader.suite.checks.base import Check\n", "defines no check kind (a Check subclass with a kind)"),
        (
            "import no_such_module_here\n",
            "cannot be imported: ModuleNotFoundError: No module named 'no_such_module_here'",
        ),
        (
            "from dataclasses import dataclass\nfrom grader.suite.checks.base import Check\n"
            "@dataclass(frozen=True)\nclass C(Check):\n    kind = 'value'\n    order = 9999\n    lab_owned = True\n"
            "    parse = schema = judge = classmethod(lambda cls: None)\n",
            "check kind 'value' is a kind the engine already has",
        ),
        (
            "from dataclasses import dataclass\nfrom grader.suite.checks.base import Check\n"
            "@dataclass(frozen=True)\nclass C(Check):\n    kind = 'mine'\n    order = 9999\n    lab_owned = True\n",
            "check kind 'mine' does not define parse, schema, judge",
        ),
    ],
)
def test_a_bad_pack_check_module_is_one_line_naming_the_lab_file_and_the_module(tmp_path, module, problem):
    from grader.suite.checks.pack_owned import pack_kind_classes

    lab_dir = tmp_path / "lab"
    (lab_dir / "pack").mkdir(parents=True)
    (lab_dir / "pack" / "__init__.py").write_text("", encoding="utf-8")
    (lab_dir / "pack" / "kinds.py").write_text(module, encoding="utf-8")
    (lab_dir / "lab.yaml").write_text(
        f"format: 1\nid: bad-kinds-{hashlib.sha1(module.encode()).hexdigest()[:10]}\ntitle: t\nstudent: {{module: m}}\nbehaviours: [{{id: a, title: A, part: core}}]\n"
        "specs: s\nreference: r\npack: pack\nchecks: {modules: [pack.kinds]}\n",
        encoding="utf-8",
    )
    with pytest.raises(LabError) as error:
        pack_kind_classes(load_lab(lab_dir))
    assert str(error.value) == f"{lab_dir / 'lab.yaml'}: checks.modules[0]: pack.kinds: {problem}"


def test_only_the_runners_a_lab_names_may_be_probed():
    from grader.suite.schema import build_schema

    def probe_enum():
        return build_schema()["$defs"]["step"]["oneOf"][-1]["properties"]["probe"]["enum"]

    lab = activate(load_lab(default_lab_root()))
    assert lab.probe == ("GraphRunner",) and probe_enum() == ["GraphRunner"]
    try:
        activate(load_lab(DECODE_STEP))
        assert probe_enum() == []  # a lab without a probe offers no class to trace
    finally:
        activate(lab)


def test_a_pack_is_the_grader_own_code_to_the_scan_and_to_the_worker():
    """The pack's private package name: flagged as the grader's own on import (the op vocabulary
    lives there), and its modules restored after every case in --isolation module."""
    from grader.judging import scan_rules
    from grader.lab.loading import PACK_PREFIX, pack_package
    from grader.run.worker.inprocess import GUARDED_PREFIXES

    assert scan_rules.PACK_PREFIX == PACK_PREFIX and pack_package(load_lab()).startswith(PACK_PREFIX)
    assert PACK_PREFIX in GUARDED_PREFIXES
