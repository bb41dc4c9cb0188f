"""The decode-step pack's specs against its reference, template and mutants, through the engine.

The engine grades this lab from its lab.yaml alone (``graphgrade validate --lab labs/decode_step``,
``graphgrade audit --lab labs/decode_step``): these tests run the same loader, interpreter and
judge in this process (the trusted reference, template and mutants need no isolation), with the
pack as the active lab; ``tests/test_labs.py`` grades them through the isolated path.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from grader.judging.judge import judge_case
from grader.judging.scoring import split_points
from grader.lab import activate, active, load_lab
from grader.lab.reference import fresh_module
from grader.observe.interpreter import observe_in_process
from grader.suite.loader import load_suite

PACK = Path(__file__).resolve().parents[1]
LAB = yaml.safe_load((PACK / "lab.yaml").read_text(encoding="utf-8"))
BEHAVIOURS = {b["id"]: b for b in LAB["behaviours"]}
MUTANTS = sorted(p for p in (PACK / "reference" / "mutants").glob("*.py") if not p.name.startswith("_"))
ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def _raw_specs() -> list[dict]:
    specs = []
    for path in sorted((PACK / "specs").glob("*.yaml")):
        for spec in yaml.safe_load(path.read_text(encoding="utf-8"))["specs"]:
            specs.append({**spec, "file": path.name})
    return specs


SPECS = _raw_specs()
CASES = [(spec, case) for spec in SPECS for case in spec["cases"]]


@pytest.fixture(scope="module", autouse=True)
def decode_step_lab():
    """This pack is the lab graded while these tests run; the lab before is restored after."""
    before = active()
    lab = activate(load_lab(PACK))
    yield lab
    activate(before)


@pytest.fixture(scope="module")
def loaded(decode_step_lab):
    return load_suite(decode_step_lab.paths.specs)


def _module(path: Path, name: str):
    import sys

    root = str(PACK.parents[1])  # mutants import labs.decode_step.reference.mutants._base from here
    if root not in sys.path:
        sys.path.append(root)
    return fresh_module(path, name)


def grade(module, loaded) -> list[tuple[str, str, float, bool]]:
    """(case uid, tag, the case's share of its spec's points, passed) for every case."""
    out = []
    for spec in loaded.suite.specs:
        for case, share in zip(spec.cases, split_points(spec.points, len(spec.cases))):
            verdict = judge_case(case, loaded.oracles[case.uid], observe_in_process(module, case.uid, case.steps))
            out.append((case.uid, spec.tag, share, verdict.status == "passed"))
    return out


def score(results) -> float:
    return sum(share for _, _, share, passed in results if passed)


def test_the_reference_passes_every_case_and_scores_100(loaded):
    results = grade(_module(PACK / "reference" / "decode_step.py", "decode_step_reference_for_tests"), loaded)
    assert [uid for uid, _, _, passed in results if not passed] == []
    assert score(results) == pytest.approx(100)
    assert len(results) == len(CASES) >= 50


def test_the_untouched_template_scores_0(loaded):
    template = _module(PACK / "student_template" / "decode_step.py", "decode_step_template_for_tests")
    assert [uid for uid, _, _, passed in grade(template, loaded) if passed] == []


@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_each_mutant_fails_a_case_of_its_own_behaviour(path, loaded):
    mutant = _module(path, f"decode_step_mutant_{path.stem}")
    assert mutant.TAG in BEHAVIOURS, f"{path.name}: TAG {mutant.TAG!r} is no behaviour of lab.yaml"
    assert mutant.__doc__ and "\n" not in mutant.__doc__.strip(), f"{path.name}: a one-line docstring"
    own = [uid for uid, tag, _, passed in grade(mutant, loaded) if not passed and tag == mutant.TAG]
    assert own, f"{path.name}: no case of {mutant.TAG} fails it"


def test_every_behaviour_has_a_mutant():
    tags = {_module(p, f"decode_step_mutant_tag_{p.stem}").TAG for p in MUTANTS}
    assert tags == set(BEHAVIOURS)


def test_a_core_only_loop_keeps_every_core_point(loaded):
    """The plan never replays; a loop that runs every replay step normally loses only stretch points."""
    core_only = _module(PACK / "reference" / "mutants" / "loop_never_replays.py", "decode_step_core_only")
    results = grade(core_only, loaded)
    assert all(passed for _, tag, _, passed in results if BEHAVIOURS[tag]["part"] == "core")
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
    assert "## Engine extensions" in readme
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


def test_nothing_of_the_pack_imports_the_grader():
    """The pack's code, reference and template stand alone (its tests drive the engine)."""
    offenders = []
    for path in (p for p in PACK.rglob("*.py") if "tests" not in p.relative_to(PACK).parts):
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
def test_each_baseline_scores_no_more_than_its_limit(path, loaded):
    baseline = _module(path, f"decode_step_baseline_{path.stem}")
    assert score(grade(baseline, loaded)) <= baseline.MAX_PERCENT + 1e-9


def test_the_state_machine_alone_earns_its_own_behaviours_and_nothing_of_the_loop(loaded):
    baseline = _module(PACK / "reference" / "mutants" / "baselines" / "state_machine_only.py", "decode_step_sm")
    results = grade(baseline, loaded)
    machine = {"step-count", "step-mode", "capture-record", "static-shape", "warmup-clamp", "disable"}
    assert {tag for _, tag, _, passed in results if passed} == machine
    failed = [uid for uid, tag, _, passed in results if not passed and tag in machine]
    assert failed == ["warmup-clamp-edge/loop-with-zero-warmup"]
