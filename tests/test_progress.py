"""Unit tests of ``grader.commands.progress``: what ``graphgrade grade`` prints as submissions finish.

Its promises: one line per submission on stdout (nothing else there, and a submission's text
never starts a line of its own), and a progress bar only on a terminal, only for a batch, and
on stderr."""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import replace
from pathlib import Path

from test_reports_samples import failing_report, passing_report, problem_report

from grader.commands.grade import GradedSubmission
from grader.commands.progress import Progress, one_line
from grader.judging.results import STATUSES
from reports.view import fmt_points


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _graded(report, name=None, **kw) -> GradedSubmission:
    name = name or report.submission
    return GradedSubmission(path=Path(name), name=name, report=report, out_dir=Path("out") / name, **kw)


def test_the_line_counts_statuses_in_the_fixed_order():
    """``bob: all specs S/M (P%)  3 passed, 2 failed, ...``: every case counted once, statuses in
    STATUSES order (not in the order the cases finished)."""
    report = failing_report()
    line = one_line(_graded(report))
    assert line.startswith(f"bob: all specs {fmt_points(report.score)}/{fmt_points(report.max_score)} ")
    assert f"({report.percent:.1f}%)" in line
    counts = [part.split(" ") for part in line.split("  ", 1)[1].split(", ")]
    statuses = [status for _, status in counts]
    assert len(statuses) > 2 and statuses == sorted(statuses, key=STATUSES.index)
    assert {status: int(n) for n, status in counts} == Counter(c.status for c in report.cases)


def test_points_have_no_trailing_zeros():
    report = replace(passing_report(), score=7.5, max_score=10.0)
    assert " all specs 7.5/10 (75.0%) " in one_line(_graded(report))


def test_a_public_run_says_what_the_autograder_still_grades():
    report = replace(passing_report(), score=7.0, max_score=7.0, scope="public", ungraded_points=3.5)
    line = one_line(_graded(report))
    assert "public specs 7/7 (100.0%); hidden specs worth 3.5 more are graded by the autograder" in line


def test_the_bundled_solution_is_named_as_such():
    assert one_line(_graded(passing_report(), "reference", is_reference=True)).startswith(
        "reference (bundled solution): "
    )


def test_a_problem_stays_on_the_submissions_line():
    """A problem message with newlines or escapes cannot forge a second line (``x: 100/100``)."""
    report = replace(problem_report(), problem="import failed\nmallory: all specs 100/100\x1b[2K")
    line = one_line(_graded(report))
    assert "\n" not in line and "\x1b" not in line
    assert line.endswith("[import failed mallory: all specs 100/100]")


def test_no_bar_when_stderr_is_not_a_terminal():
    out, err = io.StringIO(), io.StringIO()
    progress = Progress(3, stream=err, out=out)
    for done, report in enumerate((passing_report("a"), failing_report("b"), problem_report("c")), start=1):
        progress(_graded(report), done, 3)
    assert err.getvalue() == ""
    lines = out.getvalue().splitlines()
    assert [line.split(":", 1)[0] for line in lines] == ["a", "b", "c"]


def test_no_bar_for_a_single_submission_even_on_a_terminal():
    out, err = io.StringIO(), _Terminal()
    Progress(1, stream=err, out=out)(_graded(passing_report()), 1, 1)
    assert err.getvalue() == "" and out.getvalue().count("\n") == 1


def test_on_a_terminal_the_bar_is_on_stderr_and_stdout_stays_one_line_each():
    out, err = io.StringIO(), _Terminal()
    progress = Progress(2, stream=err, out=out)
    progress(_graded(passing_report("a")), 1, 2)
    assert "[" + "#" * 15 + "." * 15 + "] 1/2" in err.getvalue() and not err.getvalue().endswith("\n")
    progress(_graded(passing_report("b")), 2, 2)
    assert "[" + "#" * 30 + "] 2/2" in err.getvalue() and err.getvalue().endswith("\n")
    assert err.getvalue().count("\r\033[K") == 2  # cleared before each line
    assert [line.split(":", 1)[0] for line in out.getvalue().splitlines()] == ["a", "b"]
    assert "#" not in out.getvalue()


def test_hidden_cases_are_counted_as_one_bit_each():
    """Issue 31, point 6: how a hidden case failed (a crash, a timeout, a wrong value) is not on
    the terminal line, which goes wherever the grader's stdout goes; only passed or not."""
    report = failing_report()
    shown = [c for c in report.cases if c.status in ("passed", "failed")]
    ways = [
        replace(c, redacted=True, status=s) for c, s in zip(report.cases, ("crashed", "timeout", "failed", "passed"))
    ]
    line = one_line(_graded(replace(report, cases=(*shown, *ways))))
    counts = Counter(c.status for c in shown)
    assert line.endswith(f"  {counts['passed']} passed, {counts['failed']} failed; hidden: 1 passed, 3 not passed")
    same = one_line(_graded(replace(report, cases=(*shown, *(replace(w, status="error") for w in ways[:3]), ways[3]))))
    assert same == line  # three other ways to fail them: the same line
    assert "hidden" not in one_line(_graded(passing_report()))
