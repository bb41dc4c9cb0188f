"""`graphgrade prairielearn`: simulated PrairieLearn jobs (a /grade tree in a temporary folder),
each results.json checked field by field against PrairieLearn's external-grading format."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.shipped import shipped_suite

from grader.judging.results import CaseResult, Report, SpecSummary
from reports.prairielearn import (
    HIDDEN_DESCRIPTION,
    HIDDEN_NOT_PASSED,
    HIDDEN_PASSED,
    RESULTS_BUDGET,
    encoded_size,
    fit_budget,
    to_prairielearn,
)

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "reference" / "cudagraph.py").read_text(encoding="utf-8")
ANSWERS = (ROOT / "reference" / "answers.md").read_text(encoding="utf-8")  # the notebook answers' slots
N_CASES = sum(len(spec.cases) for spec in shipped_suite().suite.specs)  # the shipped suite's
TEST_KEYS = {"name", "description", "points", "max_points", "message", "output"}

# LaunchCounter.bump(k) adds 1 whatever k is: a realistic mistake, visible and hidden cases fail.
BUMP_BUG = """
{flood}

@classmethod
def _bump_ignores_k(cls, k=1):
    _flood()
    cls.n += 1


LaunchCounter.bump = _bump_ignores_k
"""
# Prints ~1.6 MB of control characters, markup and escapes at import and at the first bump of each
# case's process (once, so the cases still finish in time and the grade is the buggy one's).
FLOOD = """
_flooded = []


def _flood():
    if not _flooded:
        _flooded.append(1)
        try:
            sys.stderr.write("\\x1b[31m" * 100_000)
            sys.stderr.flush()
            sys.stdout.write("\\x01\\x02\\u00e9<b>&" * 200_000)
            sys.stdout.flush()
        except OSError:  # the grader's output log is full (its file size limit): go on
            pass


_flood()
_flooded.clear()
"""
NO_FLOOD = "\n\ndef _flood():\n    pass\n"


# Three of the bundled spec files (visible and hidden cases each): the jobs that need no full suite
# stay quick on a busy machine.
SUBSET = ("01_launch_counter.yaml", "02_eager.yaml", "05_single_launch_replay.yaml")


def job(tmp_path: Path, files: dict[str, str], specs_at: str = "tests", only: tuple[str, ...] = ()) -> Path:
    """A /grade tree: student/ with the given files, the bundled specs (or ``only`` these) where a
    question puts them."""
    root = tmp_path / "grade"
    (root / "student").mkdir(parents=True)
    for name, text in files.items():
        (root / "student" / name).write_text(text, encoding="utf-8")
    shutil.copytree(
        ROOT / "specs", root / specs_at, ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.json", "*.md")
    )
    for extra in (p for p in (root / specs_at).iterdir() if only and p.name not in only):
        extra.unlink()
    (root / "data").mkdir()
    (root / "data" / "data.json").write_text("{}", encoding="utf-8")
    return root


def run_job(root: Path, *extra: str) -> tuple[subprocess.CompletedProcess, dict, bytes]:
    proc = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "prairielearn", "--root", str(root), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    raw = (root / "results" / "results.json").read_bytes()
    return proc, json.loads(raw), raw


def check_tests_shape(results: dict) -> None:
    assert isinstance(results["tests"], list)
    for t in results["tests"]:
        assert set(t) == TEST_KEYS, t
        assert isinstance(t["name"], str) and t["name"]
        for key in ("description", "message", "output"):
            assert isinstance(t[key], str)
        assert isinstance(t["points"], (int, float)) and isinstance(t["max_points"], (int, float))
        assert 0 <= t["points"] <= t["max_points"]
        if "Hidden case" in t["name"]:  # one bit, fixed text
            assert t["description"] == HIDDEN_DESCRIPTION
            assert t["message"] in (HIDDEN_PASSED, HIDDEN_NOT_PASSED)
            assert t["output"] == ""
            assert (t["message"] == HIDDEN_PASSED) == (t["points"] == t["max_points"])


def test_correct_submission(tmp_path):
    root = job(tmp_path, {"cudagraph.py": REFERENCE, "answers.md": ANSWERS})
    proc, results, raw = run_job(root)
    assert proc.returncode == 0, proc.stderr
    assert set(results) == {"gradable", "score", "message", "output", "tests"}
    assert results["gradable"] is True
    assert results["score"] == 1.0
    assert results["message"] == f"106 / 106 points; {N_CASES} of {N_CASES} cases pass."
    assert results["output"].startswith(f"graphgrade: 106 / 106 points (100%); {N_CASES} of {N_CASES} cases pass.")
    assert "Core lab: 70 / 70" in results["output"]
    assert len(results["tests"]) == N_CASES
    check_tests_shape(results)
    assert all(t["points"] == t["max_points"] and t["output"] == "" for t in results["tests"])
    assert abs(sum(t["max_points"] for t in results["tests"]) - 106) < 0.01
    hidden = [t for t in results["tests"] if "Hidden case" in t["name"]]
    assert hidden and all(t["message"] == HIDDEN_PASSED for t in hidden)
    # the job's specs were locked to root before the student's code ran
    if os.geteuid() == 0:
        assert (root / "tests").stat().st_mode & 0o077 == 0
        assert all(p.stat().st_mode & 0o077 == 0 and p.stat().st_uid == 0 for p in (root / "tests").iterdir())
    assert "score 1.0000" in proc.stderr


def _buggy(flood: bool) -> str:
    return REFERENCE.replace("import ", "import sys\nimport ", 1) + BUMP_BUG.format(flood=FLOOD if flood else NO_FLOOD)


def test_buggy_submission(tmp_path):
    root = job(tmp_path, {"cudagraph.py": _buggy(False)}, only=SUBSET)
    proc, results, raw = run_job(root)
    assert proc.returncode == 0, proc.stderr
    assert results["gradable"] is True
    assert 0 < results["score"] < 1
    check_tests_shape(results)
    failed = [t for t in results["tests"] if t["points"] < t["max_points"]]
    visible_failed = [t for t in failed if "Hidden case" not in t["name"]]
    hidden_failed = [t for t in failed if "Hidden case" in t["name"]]
    assert visible_failed and hidden_failed
    # a visible failure says what was expected and what happened; a hidden one says one fixed sentence
    assert all(
        "expected:" in t["output"] and "observed:" in t["output"] for t in visible_failed if "Checks:" in t["output"]
    )
    assert any("expected:" in t["output"] for t in visible_failed)
    assert all(t["message"] == HIDDEN_NOT_PASSED and t["output"] == "" for t in hidden_failed)
    points, possible = sum(t["points"] for t in results["tests"]), sum(t["max_points"] for t in results["tests"])
    assert results["score"] == pytest.approx(points / possible, abs=1e-3)
    n = len(results["tests"])
    assert results["message"].endswith(f"{n - len(failed)} of {n} cases pass.")


@pytest.mark.parametrize(
    "files, where",
    [
        (
            {"cudagraph.py": "import numpy as np\n\ndef run_eager(ops, x:\n    return x\n"},
            "cudagraph.py:3: SyntaxError",
        ),
        ({"solution.py": REFERENCE}, "no cudagraph.py"),
    ],
    ids=["syntax-error", "no-cudagraph"],
)
def test_unimportable_submission_is_not_gradable(tmp_path, files, where):
    root = job(tmp_path, files, only=SUBSET)
    proc, results, raw = run_job(root)
    assert proc.returncode == 0, proc.stderr
    assert results["gradable"] is False
    assert "score" not in results  # not charged
    assert isinstance(results["format_errors"], list) and len(results["format_errors"]) == 1
    assert where in results["format_errors"][0]
    assert where in results["message"] and results["message"].startswith(
        "Your submission could not be graded, so no attempt was used"
    )
    assert results["tests"] == []
    assert "not gradable" in proc.stderr


@pytest.mark.slow
def test_flooding_submission_stays_under_one_megabyte(tmp_path):
    buggy_root = job(tmp_path / "a", {"cudagraph.py": _buggy(False)}, only=SUBSET)
    flood_root = job(tmp_path / "b", {"cudagraph.py": _buggy(True)}, only=SUBSET)
    _, buggy, _ = run_job(buggy_root)
    proc, results, raw = run_job(flood_root)
    assert proc.returncode == 0, proc.stderr
    assert len(raw) < 1_000_000
    assert results["gradable"] is True
    check_tests_shape(results)
    # the flood changes the text, never the grade
    assert results["score"] == buggy["score"]
    assert [(t["name"], t["points"]) for t in results["tests"]] == [(t["name"], t["points"]) for t in buggy["tests"]]
    printed = [t for t in results["tests"] if "Output (last lines)" in t["output"]]
    assert printed, "the visible failures show what the code printed"
    assert all(
        "\x01" not in t["output"] and "\x1b" not in t["output"] for t in results["tests"]
    )  # shown as \\x01, never raw
    assert any("<b>&" in t["output"] for t in printed)  # markup is text; JSON and the element escape it
    assert all(t["output"] == "" for t in results["tests"] if "Hidden case" in t["name"])


def _report(n_cases: int, output: str) -> Report:
    spec = SpecSummary("s", "A spec", "eager", n_cases, "visible", "why", "hint", 0.0, n_cases)
    cases = tuple(
        CaseResult("s", f"c{i}", "eager", "failed", 0.0, 1.0, "wrong " * 50, output_tail=output) for i in range(n_cases)
    )
    return Report("student", 0.0, n_cases, cases, (spec,))


@pytest.mark.slow
def test_budget_cuts_outputs_not_grades():
    # 400 cases, each with a long tail of escapes: about 19 times the budget once escaped (every
    # character of a tail is cleaned, so the tail's length is this test's cost; 20,000 pairs
    # gave 62 times the budget in 22 s of CPU, and proved no more)
    report = _report(400, "\x01é" * 6_000)
    unbounded = to_prairielearn(report, budget=10**12)
    assert encoded_size(unbounded) > 10 * RESULTS_BUDGET
    results = to_prairielearn(report)
    assert encoded_size(results) <= RESULTS_BUDGET
    assert len(results["tests"]) == 400
    assert [t["points"] for t in results["tests"]] == [t["points"] for t in unbounded["tests"]]
    assert "characters cut" in results["tests"][0]["output"]
    tiny = fit_budget(unbounded, budget=20_000)
    assert encoded_size(tiny) <= 20_000 and tiny["score"] == unbounded["score"]


def test_specs_found_in_server_files_course(tmp_path):
    root = job(tmp_path, {"cudagraph.py": REFERENCE}, specs_at="serverFilesCourse/graphgrade/specs", only=SUBSET)
    proc, results, _ = run_job(root)
    assert proc.returncode == 0 and results["score"] == 1.0, proc.stderr


def test_bad_specs_still_write_results(tmp_path):
    root = job(tmp_path, {"cudagraph.py": REFERENCE}, only=SUBSET)
    (root / "tests" / "01_launch_counter.yaml").write_text("specs: [\n", encoding="utf-8")
    proc, results, _ = run_job(root)
    assert proc.returncode == 0
    assert results["gradable"] is False and "autograder itself had a problem" in results["message"]
    assert "01_launch_counter.yaml" in proc.stderr  # the file, for the staff's job log
