"""report.json's ``first_cause`` (issue 34, point 3): the cause to fix first, worked out by the
grader, as the student sees it (visible cases only) and as staff see it (every case), with its
location as fields; and the page's "Fix this first" and the terminal's "[first failure at ...]"
show that same cause."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from test_reports_samples import all_passing_cases, make_report

from grader.commands.grade import GradedSubmission
from grader.commands.progress import one_line
from grader.judging.first_cause import first_cause
from grader.judging.report_reading import ReportError, read_report, report_from_json
from grader.judging.report_writing import report_to_json, write_report
from grader.judging.results import CauseAt, FirstCause
from reports import render_submission

HIDDEN_SECRET = "hidden-only-987"  # a hidden case's claim, input and line: never in the student's object


def _failed(case, *, origin="", function="", message="Step 2 (runner(x)): should cost 1 launch but cost 3.", **kw):
    return replace(
        case,
        status="failed",
        score=0.0,
        message=message,
        cause="launches",
        origin=origin,
        origin_function=function,
        **kw,
    )


def _report(*, hidden_fails: bool, visible_fails: bool):
    cases = all_passing_cases()
    visible = next(i for i, c in enumerate(cases) if c.visibility == "visible" and c.tag == "single-launch-replay")
    hidden = next(i for i, c in enumerate(cases) if c.tag == "shape-cache")
    if visible_fails:
        cases[visible] = _failed(cases[visible], origin="cudagraph.py:42", function="__call__")
    if hidden_fails:  # worth more core points than the visible one: staff's first cause
        cases[hidden] = _failed(
            replace(cases[hidden], visibility="hidden", redacted=True, max_score=cases[hidden].max_score + 10),
            origin="cudagraph.py:77",
            function="_key",
            message=f"Step 1 (runner({HIDDEN_SECRET})): the key should be {HIDDEN_SECRET}.\n  returned at cudagraph.py:77 in _key: return n",
        )
    report = make_report("alice", cases)
    return replace(report, first_cause=first_cause(report)), cases[visible], cases[hidden]


def test_staff_see_the_cause_stopping_most_core_points_the_student_only_their_visible_cases():
    report, visible, hidden = _report(hidden_fails=True, visible_fails=True)
    staff, student = report.first_cause.staff, report.first_cause.student
    assert (staff.case, staff.file, staff.line, staff.function) == (
        f"{hidden.spec}/{hidden.case}",
        "cudagraph.py",
        77,
        "_key",
    )
    assert staff.cause == "launches" and staff.text.startswith("Step 1 (runner(") and "returned at" not in staff.text
    assert (student.case, student.file, student.line, student.function) == (
        f"{visible.spec}/{visible.case}",
        "cudagraph.py",
        42,
        "__call__",
    )
    assert HIDDEN_SECRET not in json.dumps(report_to_json(report)["first_cause"]["student"])


def test_a_student_whose_only_failures_are_hidden_gets_no_first_cause_of_them():
    report, _, hidden = _report(hidden_fails=True, visible_fails=False)
    assert report.first_cause.student is None
    assert report.first_cause.staff.case == f"{hidden.spec}/{hidden.case}"
    # the terminal line (its reader is not staff) names nothing of the hidden case
    line = one_line(GradedSubmission(path=Path("alice"), name="alice", report=report, out_dir=Path("out")))
    assert "first failure" not in line and "cudagraph.py" not in line and HIDDEN_SECRET not in line
    # nor does the student's page's "Fix this first"
    page = render_submission(report)
    assert HIDDEN_SECRET not in page and "cudagraph.py:77" not in page


def test_nothing_failed_no_first_cause():
    report = make_report("alice", all_passing_cases())
    assert first_cause(report) is None


def test_a_cause_naming_no_line_has_no_location():
    cases = all_passing_cases()
    cases[0] = _failed(cases[0])
    report = make_report("alice", cases)
    found = first_cause(report).staff
    assert (found.file, found.line, found.function) == ("", 0, "")


def test_first_cause_round_trips_and_is_validated(tmp_path):
    report, _, _ = _report(hidden_fails=True, visible_fails=True)
    write_report(report, tmp_path / "report.json")
    assert read_report(tmp_path / "report.json").first_cause == report.first_cause
    data = json.loads(json.dumps(report_to_json(report)))
    data["first_cause"]["student"] = None
    assert report_from_json(data).first_cause == FirstCause(student=None, staff=report.first_cause.staff)
    data["first_cause"]["staff"]["line"] = -1
    with pytest.raises(ReportError, match=r"first_cause\.staff\.line"):
        report_from_json(data)
    data["first_cause"]["staff"] = {"case": "a/b"}
    with pytest.raises(ReportError, match=r"first_cause\.staff"):
        report_from_json(data)
    data["first_cause"] = {"student": None, "staff": None, "extra": 1}
    with pytest.raises(ReportError, match="extra"):
        report_from_json(data)


def test_the_page_and_the_terminal_show_the_report_s_first_cause():
    report, visible, _ = _report(hidden_fails=False, visible_fails=True)
    line = one_line(GradedSubmission(path=Path("alice"), name="alice", report=report, out_dir=Path("out")))
    assert f"[first failure at cudagraph.py:42 ({visible.spec}/{visible.case})]" in line
    page = render_submission(report)
    box = page[page.index('id="fix-first"') :]
    box = box[: box.index("</section>")]
    assert visible.case in box
    # the page follows the recorded first cause, not its own ranking: point it elsewhere and it moves
    other = next(c for c in report.cases if c.status == "passed" and c.visibility == "visible" and c is not visible)
    cases = [_failed(c, origin="cudagraph.py:9") if c is other else c for c in report.cases]
    moved = replace(
        report,
        cases=tuple(cases),
        first_cause=FirstCause(
            student=CauseAt(f"{other.spec}/{other.case}", "launches", "t", "cudagraph.py", 9, "f"), staff=None
        ),
    )
    page = render_submission(moved)
    box = page[page.index('id="fix-first"') :]
    box = box[: box.index("</section>")]
    assert other.case in box and visible.case not in box.split("then")[0]
