"""What ``graphgrade grade`` prints as submissions finish: one line per submission, and a
progress bar on a terminal for a batch (on stderr, so that stdout stays one line per submission)."""

from __future__ import annotations

import sys
import time

from grader.commands.grade import GradedSubmission
from grader.judging.results import STATUSES
from grader.safetext import one_line as safe_one_line


def _counts(graded: GradedSubmission) -> str:
    """``3 passed, 2 failed, 1 timeout``: the shown cases by status, in STATUSES order; then the
    hidden ones as the one bit a student gets of each (``; hidden: 5 passed, 2 not passed``): how a
    hidden case failed is the staff's (report.json, staff.html), not this line's, which reaches
    wherever the grader's stdout goes (SECURITY.md, "What is NOT defended", 2)."""
    counts: dict[str, int] = {}
    hidden = {"passed": 0, "not passed": 0}
    for case in graded.report.cases:
        if case.redacted:
            hidden["passed" if case.status == "passed" else "not passed"] += 1
        else:
            counts[case.status] = counts.get(case.status, 0) + 1
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items(), key=lambda kv: STATUSES.index(kv[0])))
    if any(hidden.values()):
        parts += ("; " if parts else "") + "hidden: " + ", ".join(f"{n} {bit}" for bit, n in hidden.items() if n)
    return parts


def one_line(graded: GradedSubmission) -> str:
    r = graded.report
    parts = _counts(graded)
    problem = f"  [{safe_one_line(r.problem)}]" if r.problem else ""  # never a line of its own
    name = f"{graded.name} (bundled solution)" if graded.is_reference else graded.name
    # the student's first cause (report.json's first_cause.student: visible cases only), where it
    # names a line of their code: the same cause their page's "Fix this first" shows
    first = r.first_cause.student if r.first_cause is not None else None
    located = (
        f"  [first failure at {safe_one_line(f'{first.file}:{first.line} ({first.case})')}]"
        if first is not None and first.line
        else ""
    )
    if r.scope == "public":
        scope = f"public specs {_pts(r.score)}/{_pts(r.max_score)} ({r.percent:.1f}%)"
        if r.ungraded_points:
            scope += f"; hidden specs worth {_pts(r.ungraded_points)} more are graded by the autograder"
    else:
        scope = f"all specs {_pts(r.score)}/{_pts(r.max_score)} ({r.percent:.1f}%)"
    return f"{name}: {scope}  {parts}{problem}{located}"


def _pts(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


class Progress:
    """One line per submission for a few, a progress bar on a terminal for a batch."""

    def __init__(self, total: int, stream=None, out=None) -> None:
        # sys.stderr and sys.stdout as they are now, not as they were at import (they may be replaced)
        self.total, self.stream, self.out = total, stream or sys.stderr, out or sys.stdout
        self.bar = total > 1 and self.stream.isatty()
        self.started = time.monotonic()

    def __call__(self, graded: GradedSubmission, done: int, total: int) -> None:
        if self.bar:
            self.stream.write("\r\033[K")  # clear the bar, print the line, draw the bar again
            self.stream.flush()
        print(one_line(graded), file=self.out, flush=True)
        if self.bar:
            width = 30
            filled = int(width * done / total)
            rate = done / max(time.monotonic() - self.started, 1e-9)
            self.stream.write(f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total}  {rate:.1f}/s")
            self.stream.write("\n" if done == total else "")
            self.stream.flush()
