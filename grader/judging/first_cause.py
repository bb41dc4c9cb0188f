"""The cause to fix first, worked out on the judging side (issue 34, point 3): report.json's
``first_cause``, which the page's "Fix this first" and the terminal's "[first failure at ...]"
both show, so that every reader (and any tool or LMS comment) names the same cause.

A cause is a group of not-passed cases: those naming the same line of the student's code are one
cause whatever each check saw there (one bug is one cause); a case naming no line is grouped by
the cause its verdict records give (:func:`record_cause`): no verdict text is parsed back.
Causes are ranked by the points they stop, core points first (a cause that stops only stretch
points never comes before one that stops a core case), then all points, then cases, then the
report's order; the first is the one to fix first.

Two scopes. Staff see every case. A student sees the visible cases only: a hidden case is one
bit to a student (SECURITY.md), and which line of their code a hidden case failed at, or what it
claimed, would tell them what it checks. So ``first_cause.student`` is computed from the visible
cases alone, and is absent (None) when no visible case failed, whatever the hidden cases did.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from grader.judging.results import CaseResult, CauseAt, CheckLine, FirstCause, Report, SpecSummary
from grader.lab import active as active_lab
from grader.safetext import one_line
from grader.spec_model import point_group

PARTS = ("core", "stricter", "answers", "stretch", "other")  # the order a student should work in
MAX_TEXT = 300  # characters of a first cause's text


def failed_record(case) -> CheckLine | None:
    """The record of what failed first in a not-passed case: its first failed check line of the
    case's own cause (grader.judging.judge sets ``cause`` from it), else its first failed line;
    None when it has none (a timeout, a crash, a report of format 1 to 3)."""
    failed = [line for line in case.checks if not line.passed]
    return next((line for line in failed if line.cause == case.cause), failed[0] if failed else None)


def cause_of(case) -> str:
    """A not-passed case's cause key: the case's own, else its first failed record's, else its
    status (a timeout, a crash)."""
    line = failed_record(case)
    return case.cause or (line.cause if line is not None else "") or case.status


def record_cause(case) -> str:
    """What failed first in a not-passed case, from its verdict records (never its message text):
    its cause key and what the failed check claimed; for a step that could not run because a name
    is missing, what it says is missing. The same whatever step numbers, arguments or counts each
    case had (a claim names none of them)."""
    line = failed_record(case)
    cause = cause_of(case)
    if cause == "missing" and line is not None:
        return f"{cause}: {line.observed}"
    if line is not None:  # what the check claimed: two unlocated failures of one kind of check
        return f"{cause}: {line.what}"  # (launches, say) are one cause only where they claim alike,
    return cause  # and a part not written yet is grouped by the part its claim names


def cause_key(case: CaseResult) -> tuple[str, str]:
    """The cause a not-passed case belongs to: its status and the student's line it names (but a
    part not written yet, grouped by the part, not by a stub's raise line, which one helper may
    hold for every part), else the cause its records give (:func:`record_cause`)."""
    if case.origin and case.cause != "not-written":
        return case.status, f"at {case.origin}"
    return case.status, record_cause(case)


def case_part(tag: str, reading: str = "handout") -> str:
    """``core``, ``stricter``, ``answers``, ``stretch``, or ``other`` for a tag outside the lab."""
    return point_group(tag, reading) if tag in active_lab().tags else "other"


def rank_key(parts_points: Iterable[tuple[str, float]], first_order: int) -> tuple:
    """The rank of a cause from its cases' (part, points stopped): core points first, then core
    cases, then all points, then cases, then the place of its first case."""
    pairs = list(parts_points)
    core = round(sum(p for part, p in pairs if part == "core"), 2)
    n_core = sum(1 for part, _ in pairs if part == "core")
    return (-core, -n_core, -round(sum(p for _, p in pairs), 2), -len(pairs), first_order)


@dataclass(frozen=True)
class _Stopped:
    case: CaseResult
    part: str
    points: float
    order: int


def ranked_causes(cases: Iterable[CaseResult], specs: Iterable[SpecSummary]) -> list[list[_Stopped]]:
    """The not-passed cases with a message, grouped by cause and ranked (the first to fix first);
    each group's lead (its first case in its most important part) first."""
    readings = {s.id: s.reading for s in specs}
    groups: dict[tuple[str, str], list[_Stopped]] = {}
    for order, case in enumerate(cases):
        if case.status == "passed" or not case.message:
            continue
        part = case_part(case.tag, readings.get(case.spec, "handout"))
        stopped = _Stopped(case, part, max(0.0, case.max_score - case.score), order)
        groups.setdefault(cause_key(case), []).append(stopped)
    ranked = sorted(groups.values(), key=lambda g: rank_key(((s.part, s.points) for s in g), g[0].order))
    out = []
    for group in ranked:
        best = min((s.part for s in group), key=PARTS.index)
        lead = next(s for s in group if s.part == best)
        out.append([lead, *(s for s in group if s is not lead)])
    return out


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1].rstrip() + "\u2026"


def _cause_at(case: CaseResult) -> CauseAt:
    file, _, line = case.origin.rpartition(":")
    located = bool(file) and line.isdigit()
    return CauseAt(
        case=f"{case.spec}/{case.case}",
        cause=case.cause or case.status,
        text=_cut(one_line(case.message.split("\n  ", 1)[0])),
        file=file if located else "",
        line=int(line) if located else 0,
        function=case.origin_function if located else "",
    )


def first_cause(report: Report) -> FirstCause | None:
    """The report's first cause as the student sees it and as staff see it; None when nothing
    failed."""
    staff = ranked_causes(report.cases, report.specs)
    if not staff:
        return None
    student = ranked_causes((c for c in report.cases if not c.redacted), report.specs)
    return FirstCause(
        student=_cause_at(student[0][0].case) if student else None,
        staff=_cause_at(staff[0][0].case),
    )


MAX_RELOCATED = 2  # failed cases a submission re-runs with every call traced (grader.run.relocating)


def to_relocate(report: Report) -> tuple[str, ...]:
    """The failed cases (``spec/case``) whose re-run with every runner's call traced may name a
    better line: the cases the first causes show, staff's and the student's (at most
    :data:`MAX_RELOCATED`). None when nothing failed: a passing submission costs nothing more."""
    staff = ranked_causes(report.cases, report.specs)
    student = ranked_causes((c for c in report.cases if not c.redacted), report.specs)
    leads = [group[0].case for group in (staff[:1] + student[:1])]
    chosen = dict.fromkeys(f"{c.spec}/{c.case}" for c in leads if c.status == "failed")
    return tuple(chosen)[:MAX_RELOCATED]


def _same_verdict(first: CaseResult, traced: CaseResult) -> bool:
    """Whether a re-run judged a case exactly as its first run did, but where it located it."""
    lines = [(c.id, c.passed, c.expected, c.observed, c.cause) for c in first.checks]
    return (
        (first.status, first.score, first.cause, first.checks_passed)
        == (traced.status, traced.score, traced.cause, traced.checks_passed)
        and first.message.split("\n", 1)[0] == traced.message.split("\n", 1)[0]
        and lines == [(c.id, c.passed, c.expected, c.observed, c.cause) for c in traced.checks]
    )


def relocated(report: Report, traced: Report, uids: Iterable[str]) -> Report:
    """``report`` with the cases ``uids`` located as ``traced`` (the same submission judged with
    those cases' re-run) located them, and its first causes shown at those locations. Verdicts
    and scores stay the first run's: a case whose re-run was judged otherwise in any way keeps
    its first location, and only the location lines of a message change. The causes keep the
    first run's grouping and rank (a re-run locates one case of a cause, not all of them)."""
    wanted = set(uids)
    again = {f"{c.spec}/{c.case}": c for c in traced.cases if f"{c.spec}/{c.case}" in wanted}
    cases = []
    for case in report.cases:
        other = again.get(f"{case.spec}/{case.case}")
        if other is not None and _same_verdict(case, other):
            case = replace(
                case, message=other.message, origin=other.origin, origin_function=other.origin_function,
                checks=other.checks, hint=other.hint,
            )  # fmt: skip
        cases.append(case)
    by_uid = {f"{c.spec}/{c.case}": c for c in cases}

    def shown(cause: CauseAt | None) -> CauseAt | None:
        case = by_uid.get(cause.case) if cause is not None and cause.case in again else None
        return _cause_at(case) if case is not None else cause

    first = report.first_cause
    return replace(
        report,
        cases=tuple(cases),
        first_cause=None if first is None else FirstCause(student=shown(first.student), staff=shown(first.staff)),
    )
