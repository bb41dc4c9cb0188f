"""Scoring (grader.judging.scoring): runs and verdicts of one submission -> its Report.

Points are split over a spec's cases in hundredths by largest remainder, so shares add up
exactly; a case's status comes from the judge when the worker observed it and from the run
otherwise; hidden cases are kept in full and marked redacted; a report of part of the suite
says so (scope "public") and how many points it did not grade. Observations here come from
the reference run in this process, so no worker starts.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.judging.scoring import add_points, build_report, split_points
from grader.observe.interpreter import observe_in_process
from grader.run.runner import CaseRun, SubmissionRun
from grader.suite.loader import load_suite
from reference.mutants._base import fresh_reference

SPECS = Path(__file__).resolve().parents[1] / "specs"


# ------------------------------------------------------------------ points
@pytest.mark.parametrize(
    ("points", "n", "shares"),
    [
        (4, 3, [1.34, 1.33, 1.33]),  # the first cases take the odd hundredths
        (10, 4, [2.5, 2.5, 2.5, 2.5]),
        (0.05, 3, [0.02, 0.02, 0.01]),
        (1, 7, [0.15, 0.15, 0.14, 0.14, 0.14, 0.14, 0.14]),
        (2.35, 2, [1.18, 1.17]),
        (3, 0, []),
    ],
)
def test_points_split_over_cases_by_largest_remainder(points, n, shares):
    got = split_points(points, n)
    assert got == shares
    assert add_points(got) == (round(points, 2) if n else 0)


def test_adding_hundredths_has_no_float_drift():
    assert add_points(split_points(100, 3)) == 100
    assert add_points([0.1] * 3) == 0.3 and add_points([0.1] * 3) != sum([0.1] * 3)
    assert add_points(split_points(100, 109) + split_points(7, 13)) == 107


# ------------------------------------------------------------------ build_report
@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """The launch-counter file alone: a visible spec of 3 cases and a hidden one of 4, 4 points each."""
    specs = tmp_path_factory.mktemp("specs")
    shutil.copy(SPECS / "01_launch_counter.yaml", specs)
    return load_suite(specs)


def _observed(module, case) -> CaseRun:
    return CaseRun(
        uid=case.uid,
        status="observed",
        observation=observe_in_process(module, case.uid, case.steps),
        message="",
        output_tail=f"tail of {case.id}",
        duration_s=0.5,
    )


def _run(loaded, overrides: dict[str, CaseRun]) -> SubmissionRun:
    reference = fresh_reference(__name__)
    cases = tuple(overrides.get(c.uid) or _observed(reference, c) for s in loaded.suite.specs for c in s.cases)
    return SubmissionRun(problem="", cases=cases, output_tail="", duration_s=2.0)


def test_every_status_is_scored_from_the_judge_or_the_run(loaded):
    visible, hidden = loaded.suite.specs
    assert (visible.visibility, len(visible.cases), hidden.visibility, len(hidden.cases)) == ("visible", 3, "hidden", 4)
    broken = fresh_reference(__name__)
    broken.LaunchCounter.reset = classmethod(lambda cls: None)  # a wrong answer, observed
    reset_case = next(c for c in visible.cases if c.id == "reset-sets-zero")
    slow, lost = visible.cases[1], hidden.cases[2]
    run = _run(
        loaded,
        {
            reset_case.uid: _observed(broken, reset_case),
            slow.uid: CaseRun(slow.uid, "timeout", None, "The case did not finish within 1 s.", "", 1.0),
            lost.uid: CaseRun(lost.uid, "observed", None, "no observation came back", "", 0.1),
        },
    )
    report = build_report("alice", loaded.suite.specs, run, loaded, "9.9")
    by_id = {c.case: c for c in report.cases}
    assert [c.case for c in report.cases] == [c.id for s in loaded.suite.specs for c in s.cases]
    failed = by_id[reset_case.id]
    assert failed.status == "failed" and failed.score == 0 and failed.message and failed.checks
    assert failed.output_tail == "tail of reset-sets-zero"
    assert (by_id[slow.id].status, by_id[slow.id].message) == ("timeout", "The case did not finish within 1 s.")
    assert by_id[lost.id].status == "error"  # "observed" without an observation is never a pass
    passed = [c for c in report.cases if c.status == "passed"]
    assert len(passed) == 4 and all(c.score == c.max_score > 0 for c in passed)
    assert [c.max_score for c in report.cases] == [1.34, 1.33, 1.33, 1.0, 1.0, 1.0, 1.0]
    assert report.score == add_points(c.score for c in passed) == 1.33 + 3.0
    assert report.max_score == 8.0
    assert [(s.id, s.score, s.max_score) for s in report.specs] == [(visible.id, 1.33, 4.0), (hidden.id, 3.0, 4.0)]
    assert [c.redacted for c in report.cases] == [False] * 3 + [True] * 4
    assert all(c.visibility == "hidden" for c in report.cases if c.redacted)
    assert (report.submission, report.grader_version, report.scope, report.ungraded_points) == (
        "alice",
        "9.9",
        "all",
        0,
    )


def test_a_report_of_the_visible_specs_says_what_it_left_out(loaded):
    visible_only = loaded.suite.only_visible().specs
    run = _run(loaded, {})
    report = build_report("bob", visible_only, run, loaded, "9.9")
    assert {c.spec for c in report.cases} == {visible_only[0].id}
    assert (report.score, report.max_score, report.scope, report.ungraded_points) == (4.0, 4.0, "public", 4.0)
    kit = build_report(
        "bob", loaded.suite.specs, run, loaded, "9.9", withheld_points=2.5
    )  # a student kit: hidden specs not shipped
    assert (kit.scope, kit.ungraded_points, kit.score) == ("public", 2.5, 8.0)


def test_a_submission_problem_and_output_are_carried_to_the_report(loaded):
    cases = tuple(
        CaseRun(c.uid, "error", None, "cudagraph.py:3: SyntaxError", "", 0.0)
        for s in loaded.suite.specs
        for c in s.cases
    )
    run = SubmissionRun(
        problem="cudagraph.py:3: SyntaxError: invalid syntax", cases=cases, output_tail="boom\n", duration_s=0.3
    )
    report = build_report("carol", loaded.suite.specs, run, loaded, "9.9")
    assert report.score == 0 and report.max_score == 8.0
    assert (
        report.problem.startswith("cudagraph.py:3: SyntaxError")
        and report.output_tail == "boom\n"
        and report.duration_s == 0.3
    )
    assert all(c.status == "error" and c.message == "cudagraph.py:3: SyntaxError" for c in report.cases)
