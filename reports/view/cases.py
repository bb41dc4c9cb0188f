"""The view of one case a renderer may show, and the rule that matters most: to a student a
``redacted`` (hidden) case is one bit, passed or not passed with one fixed message, whatever
other fields it carries (the report is the staff's full record; staff views ask for it all)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.judging.results import CaseResult, CheckLine, LaunchPoint, Report, StepLine

from .text import clean_text


@dataclass(frozen=True)
class CaseView:
    """What a student-facing renderer may show of one case."""

    spec: str
    label: str  # the case id, or "Hidden case N" for a redacted case
    status: str
    score: float
    max_score: float
    message: str
    redacted: bool
    visibility: str
    description: str = ""
    steps: tuple[StepLine, ...] = ()
    checks: tuple[CheckLine, ...] = ()
    launches: tuple[LaunchPoint, ...] = ()
    output_tail: str = ""
    duration_s: float = 0.0
    tag: str = ""
    hidden: bool = False  # a hidden case shown in full (staff views only)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failed_checks(self) -> tuple[CheckLine, ...]:
        return tuple(c for c in self.checks if not c.passed)

    @property
    def passed_checks(self) -> tuple[CheckLine, ...]:
        return tuple(c for c in self.checks if c.passed)

    @property
    def first_bad_step(self) -> int | None:
        steps = [c.step for c in self.checks if not c.passed and c.step is not None]
        return min(steps) if steps else None


# The one bit a student sees of a hidden case: the same text for every way of not passing
# (a wrong value, NotImplementedError, a missing name, a crash, a timeout), and no timing.
HIDDEN_PASSED = "Passed."
HIDDEN_NOT_PASSED = (
    "Not passed. This case is hidden: only whether it passed is shown. "
    "Its spec's explanation and hint say what it checks."
)


def one_bit(c: CaseResult, number: int) -> CaseView:
    """A hidden case as a student sees it: passed or not, one fixed message, nothing else."""
    passed = c.status == "passed"
    return CaseView(
        spec=c.spec,
        label=f"Hidden case {number}",
        status="passed" if passed else "failed",
        score=c.score if passed else 0.0,
        max_score=c.max_score,
        message=HIDDEN_PASSED if passed else HIDDEN_NOT_PASSED,
        redacted=True,
        visibility=c.visibility,
        tag=c.tag,
    )


def full_view(c: CaseResult, label: str | None = None) -> CaseView:
    """Every detail of a case (a visible case for its student; any case for staff)."""
    return CaseView(
        spec=c.spec,
        label=label or c.case,
        status=c.status,
        score=c.score,
        max_score=c.max_score,
        message=clean_text(c.message),
        redacted=False,
        visibility=c.visibility,
        description=clean_text(c.description),
        steps=c.steps,
        checks=c.checks,
        launches=c.launches,
        output_tail=clean_text(c.output_tail),
        duration_s=c.duration_s,
        tag=c.tag,
        hidden=c.redacted,
    )


def case_views(report: Report, staff: bool = False) -> tuple[CaseView, ...]:
    """Every case of the report as a student may see it (hidden ones as one bit), or, with
    ``staff=True``, every case in full (hidden ones marked ``hidden``)."""
    hidden_no: dict[str, int] = {}
    out = []
    for c in report.cases:
        if c.redacted:
            hidden_no[c.spec] = hidden_no.get(c.spec, 0) + 1
            out.append(full_view(c) if staff else one_bit(c, hidden_no[c.spec]))
        else:
            out.append(full_view(c))
    return tuple(out)


def student_duration(report: Report) -> float:
    """Grading time a student may see: 0 when any hidden case ran (its timing is the
    submission's to choose, so it could signal what the case was given)."""
    return 0.0 if any(c.redacted for c in report.cases) else report.duration_s
