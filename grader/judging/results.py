"""Typed results of grading: verdicts per case, scores per spec, one report.

This is the last stage the grader owns (spec -> case -> isolated run ->
observations -> verdicts -> **report**); everything under ``reports/`` renders
from these types and nothing else. This module is the model alone: ``report.json``, its
versioned JSON form, is written by :mod:`grader.judging.report_writing` and read back, checked
field by field, by :mod:`grader.judging.report_reading` (a renderer never trusts a file it did
not check).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# 2 added ``flags``, ``scope``, ``ungraded_points`` and hidden cases in full (staff record); 3 added
# each case's ``cause``, ``origin`` and ``hint``; 4 made each check line a record (``id``, ``check``,
# ``cause``, ``file``, ``line``, ``function``; ``observed`` without the location), added each case's
# and spec's ``scoring`` and a case's ``checks_passed``/``checks_total``, and the optional
# ``first_cause``. Formats 1 to 3 are still read. The schema: docs/report.schema.json.
REPORT_FORMAT = 4
READABLE_FORMATS = (1, 2, 3, 4)

Status = Literal["passed", "failed", "error", "timeout", "crashed", "skipped"]
STATUSES: tuple[str, ...] = ("passed", "failed", "error", "timeout", "crashed", "skipped")
Visibility = Literal["visible", "hidden", "after_due_date", "after_published"]  # one of spec_model.VISIBILITIES


STEP_RUNS = "the step runs"  # CheckLine.expected of a step's own health line (a step that must not fail)


@dataclass(frozen=True)
class CheckLine:
    """One expectation of a case, judged: what was wanted against what happened. A record, not a
    sentence: renderers build what they show from these fields and never parse the texts.

    ``id`` is stable for a given spec: ``<kind>#<n>`` for the line of the case's check ``n``
    (0-based, in the spec's order; ``<kind>`` its kind), with ``.<k>`` added to the k-th line
    (k >= 2) of a check that records several, and ``step<i>.runs`` for step i's (1-based) own
    health line. Together with
    the spec and case ids it names the line across reports (``spec/case/id``)."""

    step: int | None  # index into CaseResult.steps, or None for a whole-case check
    what: str  # the claim, in words: "launches during this call", "output equals the op chain", ...
    expected: str  # what the spec wants, a short display text (already cut)
    observed: str  # what the submission did, a short display text (already cut; no location)
    passed: bool  # the status: passed, or failed
    id: str = ""  # see above; "" in reports of formats 1-3
    check: int | None = None  # index of the spec check that recorded the line; None: a step's own health
    cause: str = ""  # the cause key of a failure: the check's kind, or the step's own cause (OWN_CAUSES)
    file: str = ""  # the student's code a failed line names: file (relative to the submission), "" if none
    line: int = 0  # ... its line, 0 when none
    function: str = ""  # ... its function, "" when none or not known

    @property
    def status(self) -> str:
        return "passed" if self.passed else "failed"

    @property
    def where(self) -> str:
        """``file:line`` of the student's code the line names, or ""."""
        return f"{self.file}:{self.line}" if self.file else ""


@dataclass(frozen=True)
class StepLine:
    """One step of a case as the student should read it."""

    index: int
    action: str  # "call runner(x: float32[4, 8])"
    outcome: str  # "returned float32[4, 8]", "raised ValueError: ...", "not reached"


@dataclass(frozen=True)
class LaunchPoint:
    """Launches of one step, expected against observed (the CUDA-graph win at a glance)."""

    step: int
    label: str
    expected: int | None
    observed: int | None


@dataclass(frozen=True)
class CaseResult:
    spec: str
    case: str
    tag: str
    status: Status
    score: float
    max_score: float
    message: str  # one student-facing sentence (or a few lines) saying what went wrong
    visibility: Visibility = "visible"
    description: str = ""
    redacted: bool = False  # details withheld: the case is not visible to students
    steps: tuple[StepLine, ...] = ()
    checks: tuple[CheckLine, ...] = ()
    launches: tuple[LaunchPoint, ...] = ()
    output_tail: str = ""
    duration_s: float = 0.0
    cause: str = ""  # what failed first: a check kind or a step's own cause (grader.judging.judge)
    origin: str = ""  # the submission's file:line its first failure names, or ""
    hint: str = ""  # the spec's hint for that cause (``hints:``), or "": its spec's hint applies
    scoring: str = "whole-case"  # SCORINGS: the spec's; "per-check": ``score`` is the passed checks' shares
    checks_passed: int = 0  # per-check scoring: the spec checks that passed (0 under whole-case scoring)
    checks_total: int = 0  # per-check scoring: the case's spec checks (0 under whole-case scoring)
    origin_function: str = ""  # the function of the submission's code at ``origin``, or ""


@dataclass(frozen=True)
class SpecSummary:
    id: str
    title: str
    tag: str
    points: float
    visibility: Visibility
    explanation: str
    hint: str
    score: float
    max_score: float
    reading: str = "handout"  # grader.spec_model.READINGS: a core tag's "graphgrade" reading counts outside the core
    scoring: str = "whole-case"  # SCORINGS: a case earns all its points or none, or a share per passed check


@dataclass(frozen=True)
class Flag:
    """Something in a submission's code for staff to look at (see :mod:`grader.judging.integrity`).
    Never shown to students and never part of a score."""

    rule: str  # one of grader.judging.integrity.RULES
    file: str  # relative to the submission
    line: int  # 0 when not about one line
    message: str


@dataclass(frozen=True)
class Answer:
    """One slot of the student's notebook answers (grader.judging.answers): what they wrote, read as data
    and made safe to show, and its verdict (``passed``/``failed`` for a cited slot, ``not scored``
    for the free text, ``missing``)."""

    slot: str
    text: str
    verdict: str


@dataclass(frozen=True)
class CauseAt:
    """A first cause as one reader may see it (grader.judging.first_cause): the case that shows it,
    its cause key, its text, and the line of the student's code it names (``file`` "" and ``line``
    0 when it names none)."""

    case: str  # "spec/case"
    cause: str  # the case's cause key (a check kind, or a step's own cause)
    text: str  # the cause in one line, as its reader may see it
    file: str
    line: int
    function: str


@dataclass(frozen=True)
class FirstCause:
    """The cause to fix first, as the student sees it (visible cases only; None when no visible
    case failed) and as staff see it (every case)."""

    student: CauseAt | None
    staff: CauseAt | None


@dataclass(frozen=True)
class Report:
    submission: str
    score: float
    max_score: float
    cases: tuple[CaseResult, ...]
    specs: tuple[SpecSummary, ...]
    format: int = REPORT_FORMAT
    problem: str = ""  # a submission-wide problem (import error, missing file), or ""
    output_tail: str = ""
    duration_s: float = 0.0
    grader_version: str = ""
    path: str = ""  # the path graded, as given (two folders named alike differ here); staff record
    flags: tuple[Flag, ...] = ()  # integrity flags, for staff only
    scope: str = "all"  # "all": every spec graded; "public": the visible specs only (a student's run)
    ungraded_points: float = 0.0  # points of the specs a "public" run left to the autograder
    answers: tuple[Answer, ...] = ()  # the notebook answers, slot by slot (staff and the student)
    first_cause: FirstCause | None = None  # the cause to fix first (grader.judging.first_cause)

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0
