"""Unit tests of ``reports.gradescope``: ``results.json`` in Gradescope's autograder format, and a
case a student can see (now or later) carrying one bit when it is hidden."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from test_reports_samples import (
    REPLAY_FAIL,
    SECRETS,
    any_report,  # noqa: F401 - a fixture
    failing_report,
    hidden_report,
    make_report,
    passing_report,
    problem_report,
)

from reports.gradescope import to_gradescope
from reports.view import HIDDEN_NOT_PASSED


def test_gradescope_results_format(any_report):
    gs = to_gradescope(any_report)
    json.dumps(gs, allow_nan=False)
    assert set(gs) >= {"score", "execution_time", "output", "visibility", "stdout_visibility", "tests"}
    assert isinstance(gs["execution_time"], int)
    assert gs["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    assert gs["stdout_visibility"] in ("visible", "hidden")
    numbers = [t["number"] for t in gs["tests"]]
    assert len(set(numbers)) == len(numbers)
    for t, c in zip(gs["tests"], any_report.cases):
        assert set(t) >= {"name", "number", "score", "max_score", "status", "output", "tags", "visibility"}
        assert t["status"] == ("passed" if c.status == "passed" else "failed")
        assert t["tags"] == [c.tag]
        assert t["visibility"] == c.visibility
        assert isinstance(t["output"], str)


@pytest.mark.parametrize("visibility", ["visible", "hidden", "after_due_date", "after_published"])
def test_gradescope_visibility_maps_one_to_one(visibility):
    case = replace(REPLAY_FAIL, visibility=visibility)
    (test,) = to_gradescope(make_report("v", [case]))["tests"]
    assert test["visibility"] == visibility


def test_gradescope_failed_output_is_actionable():
    gs = to_gradescope(failing_report())
    test = next(t for t in gs["tests"] if "replay-costs-one-launch" in t["name"])
    out = test["output"]
    assert REPLAY_FAIL.message in out
    assert "expected: 1" in out and "observed: 3" in out
    assert "Hint:" in out and "replay 1/3" in out
    assert test["name"].startswith("A replay costs exactly one launch")
    assert "Single launch replay" not in gs["output"] and "One launch per replay: 2.5 / 5" in gs["output"]
    problem = to_gradescope(problem_report())
    assert "SyntaxError" in problem["output"]


def test_an_unknown_hidden_visibility_is_refused():
    with pytest.raises(ValueError, match="hidden_visibility must be one of"):
        to_gradescope(passing_report(), hidden_visibility="students")


@pytest.mark.parametrize("later", ["after_due_date", "after_published"])
def test_a_case_students_see_later_is_one_bit(later):
    """Cases of an after_due_date / after_published spec reach students: passed or not, the one
    fixed message, no score beyond 0 for a failure, and none of the case's own text."""
    case = replace(REPLAY_FAIL, visibility=later, message="observed 3 launches for input seed 4242")
    (test,) = to_gradescope(make_report("v", [case]))["tests"]
    assert test["visibility"] == later
    assert test["output"] == HIDDEN_NOT_PASSED and test["status"] == "failed" and test["score"] == 0.0
    assert "4242" not in json.dumps(test) and REPLAY_FAIL.case not in test["name"]


def test_hidden_case_carries_its_details_only_where_staff_alone_see_it():
    """With the default ``hidden`` visibility, Gradescope shows the test to staff only, so it has
    every detail; with ``visible`` it has none of them."""
    report = hidden_report()
    (staff,) = [t for t in to_gradescope(report)["tests"] if t["status"] == "failed"]
    (student,) = [t for t in to_gradescope(report, hidden_visibility="visible")["tests"] if t["status"] == "failed"]
    assert staff["visibility"] == "hidden" and any(secret in json.dumps(staff) for secret in SECRETS)
    assert student["visibility"] == "visible" and not any(secret in json.dumps(student) for secret in SECRETS)


def test_tests_are_numbered_spec_then_case():
    """``number`` is ``<spec position>.<case within the spec>``, which Gradescope sorts by."""
    report = passing_report()
    tests = to_gradescope(report)["tests"]
    first_spec = report.specs[0].id
    assert [t["number"] for t, c in zip(tests, report.cases) if c.spec == first_spec] == ["1.1", "1.2"]
    assert tests[-1]["number"] == f"{len(report.specs)}.2"


def test_non_finite_numbers_become_zero_so_the_json_stays_valid():
    """Gradescope rejects NaN and Infinity: a score or a duration that is not finite is written as 0."""
    report = replace(passing_report(), score=math.nan, duration_s=math.inf)
    gs = to_gradescope(report)
    assert gs["score"] == 0.0 and gs["execution_time"] == 0
    json.dumps(gs, allow_nan=False)


def test_per_test_scores_are_in_hundredths():
    """A third of a point is written 0.33, so the per-test scores add up to the score shown."""
    case = replace(REPLAY_FAIL, status="passed", score=1 / 3, max_score=2 / 3)
    (test,) = to_gradescope(make_report("thirds", [case]))["tests"]
    assert (test["score"], test["max_score"]) == (0.33, 0.67)


def test_the_overview_says_why_a_submission_could_not_be_graded():
    gs = to_gradescope(problem_report())
    assert "could not be graded completely" in gs["output"] and "def __call__(self x):" in gs["output"]
    assert "could not be graded" not in to_gradescope(failing_report())["output"]


def test_execution_time_is_the_real_time_and_leaves_hidden_cases_out():
    report = passing_report()  # no hidden case: the submission's whole grading time, rounded up
    assert not any(c.redacted for c in report.cases) and to_gradescope(report)["execution_time"] == 4  # 3.4 s
    cases = [replace(c, duration_s=0.3) for c in report.cases]
    cases[0] = replace(cases[0], redacted=True, duration_s=50.0)  # a hidden case's own time stays out
    mixed = replace(report, cases=tuple(cases), duration_s=60.0)
    assert to_gradescope(mixed)["execution_time"] == math.ceil(0.3 * (len(cases) - 1))
