"""The view of one case a renderer may show, and the rule that matters most: to a student a
``redacted`` (hidden) case is one bit, passed or not passed with one fixed message, whatever
other fields it carries (the report is the staff's full record; staff views ask for it all)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.judging.results import STEP_RUNS, CaseResult, CheckLine, LaunchPoint, Report, StepLine

from .text import clean_text


def observed_text(check: CheckLine) -> str:
    """What a page shows as the submission's side of a check: the observation, then the place
    in the student's code it names, from the record's own fields (``... (at module.py:65)``)."""
    return f"{check.observed} (at {check.where})" if check.where else check.observed


def _is_step_outcome(check: CheckLine, outcome: str | None) -> bool:
    """True when a step's health line observed just what the step's own line says: the step's
    outcome is the observation, followed by where it raised (grader.suite.locating.raised_where)."""
    if outcome is None:
        return False
    return outcome == check.observed or (bool(check.where) and outcome == f"{check.observed} at {check.where}")


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
    cause: str = ""  # what failed first (a check kind, or a step's own cause); "" for one bit
    origin: str = ""  # the student's file:line the failure names; "" for one bit
    hint: str = ""  # the spec's hint for this cause, when it has one; "" for one bit
    scoring: str = "whole-case"  # the spec's scoring (grader.spec_model.SCORINGS)
    checks_passed: int = 0  # per-check scoring: the case's checks that passed; 0 for one bit
    checks_total: int = 0  # per-check scoring: the case's checks; 0 for one bit

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def partial_credit(self) -> str:
        """``partial credit: 2 of 3 checks`` for a not-passed case of a per-check spec, else ""."""
        if self.scoring != "per-check" or self.passed or not self.checks_total:
            return ""
        return (
            f"partial credit: {self.checks_passed} of {self.checks_total} check{'s' if self.checks_total != 1 else ''}"
        )

    @property
    def failed_checks(self) -> tuple[CheckLine, ...]:
        return tuple(c for c in self.checks if not c.passed)

    @property
    def shown_failed_checks(self) -> tuple[CheckLine, ...]:
        """The failed checks a page shows as expected-against-observed: all but a check that
        the step ran whose observation is that step's own outcome ("raised ValueError: ..."),
        which the step's line already says, marked as the first failing check."""
        outcomes = {s.index: s.outcome for s in self.steps}
        return tuple(
            c
            for c in self.failed_checks
            if not (c.expected == STEP_RUNS and c.step is not None and _is_step_outcome(c, outcomes.get(c.step)))
        )

    @property
    def passed_checks(self) -> tuple[CheckLine, ...]:
        return tuple(c for c in self.checks if c.passed)

    @property
    def first_bad_step(self) -> int | None:
        steps = [c.step for c in self.checks if not c.passed and c.step is not None]
        return min(steps) if steps else None

    @property
    def step_runs(self) -> tuple[StepRun, ...]:
        """The steps as a page lists them: consecutive steps that did not run for one reason
        make one line (their actions together), every other step a line of its own."""
        return step_runs(self.steps, self.first_bad_step)


@dataclass(frozen=True)
class StepRun:
    """One line of a case's step list: one step, or several in a row that did not run alike."""

    first: int  # 0-based, as StepLine.index
    last: int
    actions: tuple[str, ...]
    outcome: str
    here: bool  # holds the first step a failed check is about

    @property
    def action(self) -> str:
        return "; ".join(self.actions)


def step_runs(steps: tuple[StepLine, ...], first_bad: int | None = None) -> tuple[StepRun, ...]:
    out: list[StepRun] = []
    for st in steps:
        prev = out[-1] if out else None
        if (
            prev is not None
            and st.outcome.startswith("not run")
            and st.outcome == prev.outcome
            and st.index == prev.last + 1
            and st.index != first_bad
            and not prev.here
        ):
            out[-1] = StepRun(prev.first, st.index, (*prev.actions, st.action), st.outcome, False)
        else:
            out.append(StepRun(st.index, st.index, (st.action,), st.outcome, st.index == first_bad))
    return tuple(out)


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
        cause=c.cause,
        origin=clean_text(c.origin),
        hint=clean_text(c.hint),
        scoring=c.scoring,
        checks_passed=c.checks_passed,
        checks_total=c.checks_total,
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
