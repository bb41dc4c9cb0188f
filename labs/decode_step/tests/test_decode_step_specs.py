"""The decode-step pack's specs against its reference, template and mutants.

Runs through the TEMPORARY in-process runner (decode_step_spec_runner.py) until the engine
loads lab packs; then ``graphgrade validate --lab`` and ``graphgrade audit --lab`` take over
and the runner-based tests here go with the runner.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml
from decode_step_spec_runner import PACK, load_specs, load_submission, run_suite, score

SPECS = load_specs()
LAB = yaml.safe_load((PACK / "lab.yaml").read_text(encoding="utf-8"))
BEHAVIOURS = {b["id"]: b for b in LAB["behaviours"]}
MUTANTS = sorted(p for p in (PACK / "reference" / "mutants").glob("*.py") if not p.name.startswith("_"))
ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CASES = [(spec, case) for spec in SPECS for case in spec["cases"]]


@pytest.fixture(scope="module")
def reference():
    return load_submission(PACK / "reference" / "decode_step.py", "decode_step_reference_for_tests")


def test_the_reference_passes_every_case_and_scores_100(reference):
    results = run_suite(reference, SPECS)
    failed = {r.uid: r.reasons for r in results if not r.passed}
    assert failed == {}
    assert score(results) == pytest.approx(100)
    assert len(results) == len(CASES) >= 50


def test_the_untouched_template_scores_0():
    template = load_submission(PACK / "student_template" / "decode_step.py", "decode_step_template_for_tests")
    results = run_suite(template, SPECS)
    assert [r.uid for r in results if r.passed] == []


@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_each_mutant_fails_a_case_of_its_own_behaviour(path):
    mutant = load_submission(path, f"decode_step_mutant_{path.stem}")
    assert mutant.TAG in BEHAVIOURS, f"{path.name}: TAG {mutant.TAG!r} is no behaviour of lab.yaml"
    assert mutant.__doc__ and "\n" not in mutant.__doc__.strip(), f"{path.name}: a one-line docstring"
    results = run_suite(mutant, SPECS)
    own = [r.uid for r in results if not r.passed and r.tag == mutant.TAG]
    assert own, f"{path.name}: no case of {mutant.TAG} fails it"


def test_every_behaviour_has_a_mutant():
    tags = {load_submission(p, f"decode_step_mutant_tag_{p.stem}").TAG for p in MUTANTS}
    assert tags == set(BEHAVIOURS)


def test_a_core_only_loop_keeps_every_core_point():
    """The plan never replays; a loop that runs every replay step normally loses only stretch points."""
    core_only = load_submission(PACK / "reference" / "mutants" / "loop_never_replays.py", "decode_step_core_only")
    results = run_suite(core_only, SPECS)
    parts = {r.uid: BEHAVIOURS[r.tag]["part"] for r in results}
    assert all(r.passed for r in results if parts[r.uid] == "core")
    assert score(results) == pytest.approx(LAB["points"]["core"] + LAB["points"]["stricter"])


# ------------------------------------------------------------------ the suite's shape (tests/test_suite_shape.py's rules)
def test_points_total_100_split_as_lab_yaml_says():
    groups = Counter()
    per_tag = Counter()
    for spec in SPECS:
        part = BEHAVIOURS[spec["tag"]]["part"]
        group = "stricter" if part == "core" and spec.get("reading") == "graphgrade" else part
        groups[group] += spec["points"]
        per_tag[spec["tag"]] += spec["points"]
    assert sum(groups.values()) == pytest.approx(LAB["points"]["total"]) == pytest.approx(100)
    for group in ("core", "stricter", "stretch"):
        assert groups[group] == pytest.approx(LAB["points"][group]), group
    assert {tag: BEHAVIOURS[tag]["points"] for tag in BEHAVIOURS} == dict(per_tag)


def test_every_behaviour_has_3_cases_a_visible_and_a_hidden_spec():
    for tag in BEHAVIOURS:
        specs = [s for s in SPECS if s["tag"] == tag]
        assert sum(len(s["cases"]) for s in specs) >= 3, tag
        visibilities = {s["visibility"] for s in specs}
        assert "visible" in visibilities and visibilities - {"visible"}, tag


def test_one_area_per_file_and_files_in_behaviour_order():
    tags_by_file = {}
    for spec in SPECS:
        tags_by_file.setdefault(spec["file"], set()).add(spec["tag"])
    assert all(len(tags) == 1 for tags in tags_by_file.values())
    order = [next(iter(tags)) for _, tags in sorted(tags_by_file.items())]
    assert order == [b["id"] for b in LAB["behaviours"]]


@pytest.mark.parametrize("spec", SPECS, ids=[s["id"] for s in SPECS])
def test_every_spec_is_written_as_the_suite_requires(spec):
    assert ID.match(spec["id"])
    assert len(spec["explanation"].split()) >= 20 and len(spec["hint"].split()) >= 8
    assert spec["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    assert spec.get("reading", "handout") in ("handout", "graphgrade")
    for case in spec["cases"]:
        assert ID.match(case["id"]) and case["description"].strip()


def _names_used(case):
    """Every name a case's checks or steps refer to, and every name its steps bind, in order."""
    bound, refs = [], []
    for step in case["steps"]:
        for value in [*step.get("args", []), *step.get("kwargs", {}).values()]:
            if isinstance(value, dict):
                refs.append((value["ref"], len(bound)))
        if "of" in step:
            refs.append((step["of"], len(bound)))
        if "as" in step:
            bound.append(step["as"])
    return bound, refs


@pytest.mark.parametrize("spec,case", CASES, ids=[f"{s['id']}/{c['id']}" for s, c in CASES])
def test_every_name_is_bound_before_use_and_every_kwarg_is_declared(spec, case):
    bound, refs = _names_used(case)
    assert len(bound) == len(set(bound))
    for name, position in refs:
        assert name in bound[:position], f"{name} used before a step binds it"
    kwargs = set(LAB["kwargs"]) | {k for p in LAB["provided"] for k in p["kwargs"]}
    buildable = {e["name"] for e in LAB["student"]["entry_points"] if e.get("buildable")}
    buildable |= {p["name"] for p in LAB["provided"]}
    for step in case["steps"]:
        assert set(step.get("kwargs", {})) <= kwargs
        assert step.get("build", "InferenceGraphCapture") in buildable
    for check in case["checks"]:
        ((kind, body),) = check.items()
        assert kind in LAB["checks"]["shared"] + [c["kind"] for c in LAB["checks"]["own"]]
        for key in ("step", "during", "after", "of"):
            if key in body:
                assert body[key] in bound, f"{kind}.{key}: {body[key]} is no step's name"


def test_the_contract_names_everything_the_specs_use():
    contract = (PACK / "docs" / "contract.md").read_text(encoding="utf-8")
    for entry in LAB["student"]["entry_points"]:
        assert f"`{entry['name']}`" in contract, entry["name"]
        for member in entry["members"]:
            assert member in contract, member
    used = {step.get("method") or step.get("read") or step.get("set") for _, c in CASES for step in c["steps"]}
    assert {u for u in used if u and u not in contract} == set()
    for rule in ("below 1 is raised to 1", "disabled by default", "graphgrade's reading", "What is left to you"):
        assert rule.lower() in contract.lower(), rule


def test_the_specs_readme_lists_every_spec_and_the_extensions():
    readme = (PACK / "specs" / "README.md").read_text(encoding="utf-8")
    for spec in SPECS:
        assert f"`{spec['id']}`" in readme, spec["id"]
    assert "## Engine extensions needed" in readme
    assert f"{len(SPECS)} specs, {len(CASES)} cases" in readme


def test_pack_files_stay_under_600_lines():
    long = [
        str(p.relative_to(PACK))
        for p in PACK.rglob("*")
        if p.is_file()
        and p.suffix in {".py", ".yaml", ".md"}
        and len(p.read_text(encoding="utf-8").splitlines()) >= 600
    ]
    assert long == []


def test_nothing_under_the_pack_imports_the_grader():
    offenders = []
    for path in PACK.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if re.search(r"^\s*(from|import)\s+(grader|reports)\b", text, re.MULTILINE):
            offenders.append(path.name)
    assert offenders == []


def test_mutant_files_are_only_edits_of_the_reference():
    for path in MUTANTS:
        text = path.read_text(encoding="utf-8")
        assert text.rstrip().endswith("run_edited_reference(globals(), EDITS)"), path.name
        assert "\ndef " not in text and "\nclass " not in text, f"{path.name}: edits only, no code of its own"


BASELINES = sorted(p for p in (PACK / "reference" / "mutants" / "baselines").glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("path", BASELINES, ids=[p.stem for p in BASELINES])
def test_each_baseline_scores_no_more_than_its_limit(path):
    baseline = load_submission(path, f"decode_step_baseline_{path.stem}")
    assert score(run_suite(baseline, SPECS)) <= baseline.MAX_PERCENT + 1e-9


def test_the_state_machine_alone_earns_its_own_behaviours_and_nothing_of_the_loop():
    baseline = load_submission(PACK / "reference" / "mutants" / "baselines" / "state_machine_only.py", "decode_step_sm")
    results = run_suite(baseline, SPECS)
    machine = {"step-count", "step-mode", "capture-record", "static-shape", "warmup-clamp", "disable"}
    assert {r.tag for r in results if r.passed} == machine
    assert [r.uid for r in results if not r.passed and r.tag in machine] == ["warmup-clamp-edge/loop-with-zero-warmup"]


def test_the_state_machine_specs_already_run_on_mains_engine(tmp_path):
    """TEMPORARY, with the runner: files 01-04 and 06 use only steps and checks main's engine has.
    With their tags renamed to the CUDA-graph lab's ``state-machine`` (the one extension they
    need: behaviour tags from lab.yaml), ``graphgrade validate`` loads them with its strict
    loader and the CUDA-graph lab's reference passes every case (its InferenceGraphCapture has
    this lab's contract); the one problem left is the other lab's tags no spec covers."""
    import shutil
    import subprocess
    import sys

    machine_only = [p for p in sorted((PACK / "specs").glob("*.yaml")) if p.name[:2] in {"01", "02", "03", "04", "06"}]
    for path in machine_only:
        text = re.sub(r"(?m)^    tag: .*$", "    tag: state-machine", path.read_text(encoding="utf-8"))
        (tmp_path / path.name).write_text(text, encoding="utf-8")
    exe = shutil.which("graphgrade")
    cmd = [exe] if exe else [sys.executable, "-m", "grader.commands.cli"]
    result = subprocess.run(
        [*cmd, "validate", "--specs", str(tmp_path)], capture_output=True, text=True, timeout=300, check=False
    )
    said = result.stdout + result.stderr
    problems = [
        line
        for line in said.splitlines()
        if line.startswith("graphgrade: ") and not line.startswith("graphgrade: specs:")
    ]
    assert len(problems) == 1 and "no spec covers the behaviour tag(s)" in problems[0], said
    cases = sum(len(s["cases"]) for s in SPECS if s["file"] in {p.name for p in machine_only})
    assert f"{cases} cases" in said and "1 problem(s) on the numpy reference" in said, said


# ------------------------------------------------------------------ the temporary runner itself
def test_the_runner_compares_values_strictly():
    from decode_step_spec_runner import same

    assert same(True, True) and not same(True, 1) and not same(1, True)
    assert same(2, 2) and not same(2, 2.0) and same(2.0, 2)
    assert same(None, None) and not same(None, 0)
    assert same([1000, 1001], [1000, 1001]) and same([1], (1,)) and not same([1, 2], [1])


def test_the_runner_fails_a_case_whose_step_raises_unless_a_raises_check_expects_it(reference):
    import types

    from decode_step_spec_runner import run_case

    class Boom:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("boom")

    module = types.SimpleNamespace(**{**vars(reference), "InferenceGraphCapture": Boom})
    steps = [{"build": "InferenceGraphCapture", "as": "sm", "args": [1]}]
    unexpected = {"id": "c", "steps": steps, "checks": [{"value": {"step": "sm", "equals": None}}]}
    expected = {"id": "c", "steps": steps, "checks": [{"raises": {"step": "sm", "type": "RuntimeError"}}]}
    spec = {"id": "s", "tag": "step-count", "points": 1, "cases": [unexpected]}
    assert not run_case(module, spec, unexpected).passed
    assert run_case(module, spec, expected).passed
