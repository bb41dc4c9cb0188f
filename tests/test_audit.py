"""`graphgrade audit`: the mutants, the baselines, the kill matrix and its outputs.

The slow tests run the real audit (every mutant and baseline through the
isolated grader) on the shipped suite and on copies with one behaviour's
spec file removed; the fast ones check the mutant modules and the audit's
verdict logic on synthetic reports.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import html5lib
import pytest

import reference
from grader.commands.audit import (
    AuditResult,
    MutantResult,
    Subject,
    discover_baselines,
    discover_mutants,
    evaluate,
)
from grader.judging.results import CaseResult, Report
from grader.lab import active as active_lab
from reports.audit_html import render_audit
from reports.audit_text import format_text

TAGS = active_lab().tags  # the default lab's behaviours
MUTANTS_DIR = active_lab().paths.mutants
BASELINES_DIR = MUTANTS_DIR / "baselines"

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
BASELINE_NAMES = {"untouched_template", "always_eager", "identity"}


def audit(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "audit", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def parse_html(text: str):
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=True).parse(text)


# ------------------------------------------------------------------ the mutant modules
MUTANT_FILES = sorted(p for p in MUTANTS_DIR.glob("*.py") if not p.name.startswith("_"))
BASELINE_FILES = sorted(p for p in BASELINES_DIR.glob("*.py") if not p.name.startswith("_"))


def test_there_are_enough_mutants_and_the_baselines():
    assert len(MUTANT_FILES) >= 25
    assert {p.stem for p in BASELINE_FILES} == BASELINE_NAMES
    assert not {p.stem for p in MUTANT_FILES} & BASELINE_NAMES


@pytest.mark.parametrize("path", MUTANT_FILES + BASELINE_FILES, ids=lambda p: p.stem)
def test_module_imports_and_exposes_the_contract(path: Path):
    package = "reference.mutants" if path.parent == MUTANTS_DIR else "reference.mutants.baselines"
    module = importlib.import_module(f"{package}.{path.stem}")
    for name in reference.CONTRACT_NAMES:
        assert hasattr(module, name), f"{path.name} does not expose {name}"
    doc = (module.__doc__ or "").strip()
    assert doc and "\n" not in doc, f"{path.name} needs a one-line docstring describing the mistake"
    # a mutant is its own edited copy of the reference, never the reference itself
    assert module.GraphRunner is not reference.GraphRunner
    assert module.LaunchCounter is not reference.LaunchCounter


def test_mutants_leave_the_reference_alone():
    for path in MUTANT_FILES + BASELINE_FILES:
        package = "reference.mutants" if path.parent == MUTANTS_DIR else "reference.mutants.baselines"
        importlib.import_module(f"{package}.{path.stem}")
    import reference.cudagraph as ref

    def function_of(value):
        for attr in ("__func__", "fget"):
            value = getattr(value, attr, None) or value
        return value if hasattr(value, "__globals__") else None

    # a function patched in by a mutant would carry the mutant's (or its copy's) globals
    for cls in ("LaunchCounter", "GraphRunner", "PiecewiseGraphRunner", "InferenceGraphCapture"):
        for attr, value in vars(getattr(ref, cls)).items():
            func = function_of(value)
            if func is not None:
                assert func.__globals__ is vars(ref), f"reference.cudagraph.{cls}.{attr} was replaced"
    for name in ("run_eager", "fuse_elementwise"):
        assert getattr(ref, name).__globals__ is vars(ref)
    assert ref._FusedElementwise.__module__ == "reference.cudagraph"


def test_discovery_reads_docstrings_and_limits_without_importing():
    mutants = discover_mutants()
    assert [m.name for m in mutants] == [p.stem for p in MUTANT_FILES]
    assert all(m.description and m.max_percent is None for m in mutants)
    limits = {b.name: b.max_percent for b in discover_baselines()}
    assert limits == {"untouched_template": 0.0, "always_eager": 40.0, "identity": 10.0}


# ------------------------------------------------------------------ the verdict logic, on synthetic reports
def _spec(sid: str, *cases: str):
    return SimpleNamespace(
        id=sid,
        title=f"title {sid}",
        tag="eager",
        visibility="visible",
        cases=tuple(SimpleNamespace(id=c) for c in cases),
    )


def _report(name: str, failing: set[str], problem: str = "") -> Report:
    cases = []
    for uid in ("a/one", "a/two", "b/three", "c/four"):
        spec, case = uid.split("/")
        bad = uid in failing
        cases.append(
            CaseResult(
                spec=spec,
                case=case,
                tag="eager",
                status="failed" if bad else "passed",
                score=0.0 if bad else 1.0,
                max_score=1.0,
                message="",
            )
        )
    score = sum(c.score for c in cases)
    return Report(submission=name, score=score, max_score=4.0, cases=tuple(cases), specs=(), problem=problem)


SPECS_ABC = (_spec("a", "one", "two"), _spec("b", "three"), _spec("c", "four"))


def _evaluate(control_failing=frozenset(), mutants=None, baselines=None) -> AuditResult:
    mutants = mutants if mutants is not None else {"m1": ({"a/one"}, ""), "m2": ({"b/three", "c/four"}, "")}
    baselines = baselines if baselines is not None else {"base": ({"a/one", "a/two", "b/three"}, 25.0)}
    m_subjects = [Subject(n, Path(f"{n}.py"), f"mistake {n}") for n in mutants]
    b_subjects = [Subject(n, Path(f"{n}.py"), f"baseline {n}", limit) for n, (_, limit) in baselines.items()]
    return evaluate(
        SPECS_ABC,
        _report("reference", set(control_failing)),
        [_report(n, failing, problem) for n, (failing, problem) in mutants.items()],
        [_report(n, failing) for n, (failing, _) in baselines.items()],
        m_subjects,
        b_subjects,
        1.5,
        "specs/",
    )


def test_kills_and_a_clean_audit():
    result = _evaluate()
    assert result.ok
    assert [m.killed_by for m in result.mutants] == [("a/one",), ("b/three", "c/four")]
    assert result.specs_killing_nothing == ()
    assert result.cases_killing_nothing == ("a/two",)
    data = result.to_json()
    assert data["ok"] is True
    assert data["mutants"][0] == {"name": "m1", "description": "mistake m1", "killed_by": ["a/one"]}
    assert data["baselines"][0]["percent"] == 25.0 and data["baselines"][0]["ok"] is True
    assert "OK: 2 of 2 mutants killed" in format_text(result)


def test_a_survivor_fails_the_audit_and_is_named():
    result = _evaluate(mutants={"m1": ({"a/one"}, ""), "lucky": (set(), "")})
    assert not result.ok
    assert [m.name for m in result.survivors] == ["lucky"]
    assert set(result.specs_killing_nothing) == {"b", "c"}
    text = format_text(result)
    assert "SURVIVED lucky: mistake lucky" in text
    assert text.rstrip().splitlines()[-1].startswith("FAILED") and "lucky" in text.rstrip().splitlines()[-1]
    assert result.to_json()["survivors"] == ["lucky"]


def test_a_case_the_reference_fails_kills_nothing_and_fails_the_audit():
    result = _evaluate(control_failing={"a/one"})
    assert result.mutants[0].killed_by == ()  # m1 was "killed" only by a wrong case
    assert result.control_failures == ("a/one",)
    assert not result.ok


def test_a_baseline_above_its_limit_fails_the_audit():
    result = _evaluate(baselines={"generous": (set(), 50.0)})  # passes everything: 100% > 50%
    assert [b.name for b in result.baselines_too_high] == ["generous"]
    assert not result.ok
    assert "TOO HIGH generous: 100.0%" in format_text(result)


def test_a_mutant_that_cannot_be_imported_is_broken_not_killed():
    result = _evaluate(
        mutants={
            "m1": ({"a/one"}, ""),
            "typo": ({"a/one", "a/two", "b/three", "c/four"}, "cudagraph.py:3: SyntaxError"),
        }
    )
    assert [m.name for m in result.broken] == ["typo"]
    assert not result.mutants[1].killed
    assert not result.ok


def test_html_page_is_valid_and_escapes_everything():
    result = _evaluate(mutants={"m1": ({"a/one"}, ""), "evil": (set(), "")})
    evil = MutantResult("evil", "<script>alert(1)</script> & friends", ())
    result = replace(result, mutants=(result.mutants[0], evil))
    page = render_audit(result)
    parse_html(page)
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; friends" in page
    assert 'id="m-evil"' in page and "the suite has gaps" in page


# ------------------------------------------------------------------ the real audit
@pytest.fixture
def shipped(shipped_audit):
    """The session's one audit of the shipped suite (tests/conftest.py)."""
    return shipped_audit.proc, shipped_audit.data, shipped_audit.html


@pytest.mark.slow
def test_shipped_suite_kills_every_mutant(shipped):
    proc, data, _ = shipped
    survivors = [m["name"] for m in data["mutants"] if not m["killed_by"]]
    assert survivors == [], f"mutants no case catches: {survivors}"
    assert proc.returncode == 0, proc.stderr
    assert data["ok"] is True
    assert len(data["mutants"]) >= 25
    assert {m["name"] for m in data["mutants"]} == {p.stem for p in MUTANT_FILES}
    assert all(m["description"] for m in data["mutants"])
    case_ids = {c for s in data["specs"] for c in s["cases"]}
    assert all(set(m["killed_by"]) <= case_ids for m in data["mutants"])
    assert data["specs_killing_nothing"] == []
    assert data["reference_failures"] == []


# What each part's cases use (docs/contract.md): eager execution builds on the counter, the three
# facets of GraphRunner on eager execution (and on one another), piecewise runners on GraphRunner;
# padding and warm-up extend GraphRunner, fusion extends run_eager, and the state machine stands
# alone. A mistake may cost points downstream of its own behaviour, never upstream.
RUNNER = ("shape-cache", "static-buffer", "single-launch-replay")
UPSTREAM = {
    "launch-counter": (),
    "eager": ("launch-counter",),
    **{t: ("launch-counter", "eager") for t in RUNNER},
    "piecewise": ("launch-counter", "eager", *RUNNER),
    "padding": ("launch-counter", "eager", *RUNNER),
    "warmup": ("launch-counter", "eager", *RUNNER),
    "fusion": ("launch-counter", "eager"),
    "state-machine": (),
    # the answers cite lines of the runner: a runner bug may cost them (the audit leaves them out)
    "notebook-answers": ("launch-counter", "eager", *RUNNER),
}


def _declared_tag(path: Path) -> str | None:
    import ast

    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TAG" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


@pytest.mark.parametrize("path", MUTANT_FILES, ids=[p.stem for p in MUTANT_FILES])
def test_every_mutant_names_the_behaviour_it_breaks(path: Path):
    assert _declared_tag(path) in TAGS, f"{path.name}: set TAG to the behaviour tag whose rule the mistake breaks"


def test_the_tag_order_is_complete():
    assert set(UPSTREAM) == set(TAGS)


@pytest.mark.slow
def test_each_mutant_loses_its_points_on_its_own_behaviour(shipped):
    """Each case's points are charged to the behaviour it exercises: a mutant loses more on its own
    tag than on any unrelated tag, and nothing on the behaviours its own builds on (a runner bug
    costs no launch-counter or eager points)."""
    _, data, _ = shipped
    tag_of = {s["id"]: s["tag"] for s in data["specs"]}
    points = {c: s_points for s in data["specs"] for c, s_points in _case_points(s)}
    problems = []
    for m in data["mutants"]:
        own = _declared_tag(MUTANTS_DIR / f"{m['name']}.py")
        lost: dict[str, float] = {}
        for uid in m["killed_by"]:
            tag = tag_of[uid.split("/", 1)[0]]
            lost[tag] = lost.get(tag, 0.0) + points[uid]
        related = (
            set(UPSTREAM[own])
            | {t for t, ups in UPSTREAM.items() if own in ups}
            | ({*RUNNER} if own in RUNNER else set())
        )
        if lost.get(own, 0.0) <= 0:
            problems.append(f"{m['name']}: loses nothing on its own tag {own} ({lost})")
        for tag in UPSTREAM[own]:
            if tag in lost and not (own in RUNNER and tag in RUNNER):
                problems.append(
                    f"{m['name']} ({own}) costs {lost[tag]:.2f} points on {tag}, a behaviour {own} builds on"
                )
        for tag, value in lost.items():
            if tag != own and tag not in related and value > lost.get(own, 0.0):
                problems.append(
                    f"{m['name']} ({own}) loses more on the unrelated {tag} ({value:.2f}) than on {own} ({lost.get(own, 0.0):.2f})"
                )
    assert not problems, "\n".join(problems)


def _case_points(spec: dict):
    points = {s.id: s.points for s in _suite().specs}[spec["id"]]
    return [(c, points / len(spec["cases"])) for c in spec["cases"]]


_SUITE = []


def _suite():
    from grader.suite.loader import load_suite

    if not _SUITE:
        _SUITE.append(load_suite(SPECS).suite)
    return _SUITE[0]


@pytest.mark.slow
def test_shipped_suite_keeps_baselines_low(shipped):
    _, data, _ = shipped
    scores = {b["name"]: b for b in data["baselines"]}
    assert set(scores) == BASELINE_NAMES
    for b in scores.values():
        assert 0.0 <= b["percent"] <= b["max_percent"], b
        assert b["ok"] is True
        assert b["max_score"] > 0
    assert scores["untouched_template"]["percent"] == 0.0
    assert scores["identity"]["percent"] <= 10.0
    assert scores["always_eager"]["percent"] <= 40.0


@pytest.mark.slow
def test_shipped_suite_html_page(shipped):
    _, data, html = shipped
    text = html.read_text(encoding="utf-8")
    parse_html(text)
    assert "<script" not in text.lower() and "http://" not in text and "https://" not in text
    for m in data["mutants"]:
        assert f'id="m-{m["name"]}"' in text
    for s in data["specs"]:
        assert s["id"] in text
    assert "every mutant killed" in text


def _cases_in(spec_file: str) -> set[str]:
    from grader.suite.loader import load_spec_text

    path = SPECS / spec_file
    return {c.uid for s in load_spec_text(path.read_text(encoding="utf-8"), str(path)).specs for c in s.cases}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("removed", "expected"),
    [
        (
            "10_state_machine.yaml",
            {
                "state_capture_at_or_after_threshold",
                "state_capture_one_step_late",
                "state_capture_repeats",
                "state_no_warmup_clamp",
                "state_capture_while_disabled",
                "state_disable_not_permanent",
                "state_is_captured_after_attempt",
                "state_is_captured_truthy_id",
                "shape_check_ignores_batch",
                "shape_check_ignores_seq_step",
                "shape_check_true_before_capture",
            },
        ),
        ("07_padding.yaml", {"padding_unsorted_sizes"}),
    ],
    ids=["state-machine", "padding"],
)
def test_removing_a_behaviour_leaves_the_mutants_only_it_catches_alive(shipped, removed, expected):
    """Cases are graded independently, so the audit of the suite without one spec file is the
    shipped audit's kill matrix without that file's cases: a mutant survives exactly when every
    case that kills it is in the removed file."""
    _, data, _ = shipped
    removed_cases = _cases_in(removed)
    assert removed_cases and removed_cases <= {c for s in data["specs"] for c in s["cases"]}
    survivors = {m["name"] for m in data["mutants"] if set(m["killed_by"]) <= removed_cases}
    assert expected <= survivors


@pytest.mark.slow
def test_a_suite_with_a_gap_fails_the_audit_and_names_survivors(tmp_path):
    """The real command on a narrowed suite (the launch-counter spec alone): every runner and
    state-machine mistake goes uncaught, and the audit says so (the text form of the same
    verdict is tested on synthetic reports above, and through the command in test_cli.py)."""
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(SPECS / "01_launch_counter.yaml", specs)
    proc = audit("--specs", str(specs), "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["ok"] is False
    survivors = {m["name"] for m in data["mutants"] if not m["killed_by"]}
    assert {"state_capture_repeats", "padding_unsorted_sizes", "replay_launches_every_op"} <= survivors
    assert set(data["survivors"]) == survivors
    assert {s["id"] for s in data["specs"]} == {sid.split("/")[0] for sid in _cases_in("01_launch_counter.yaml")}
    assert {c for m in data["mutants"] for c in m["killed_by"]} <= _cases_in("01_launch_counter.yaml")


# ------------------------------------------------------------------ usage errors
def test_bad_arguments_exit_2_with_one_line(tmp_path):
    proc = audit("--jobs", "0")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--jobs" in proc.stderr
    proc = audit("--specs", str(tmp_path / "nowhere"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "nowhere" in proc.stderr


def test_bad_specs_exit_2(tmp_path):
    (tmp_path / "broken.yaml").write_text("format: 1\nspecs:\n  - id: x\n    title: 3\n")
    proc = audit("--specs", str(tmp_path))
    assert proc.returncode == 2
    assert "broken.yaml" in proc.stderr
    assert "Traceback" not in proc.stderr
