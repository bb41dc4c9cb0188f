"""Causes: one per bug, whatever step numbers and counts its cases name; the causes of one
page's failures, ranked by the points they stop (core points first), each shown in full once;
and the one a student should fix first.

What a cause is and how causes rank is the grader's (:mod:`grader.judging.first_cause`, which
also records report.json's ``first_cause``): the cases naming one line of the student's code
are one cause whatever each check saw there; a case naming no line is grouped by the cause its
verdict records give. This module lays them out on a page, and "Fix this first"
shows the cause holding the report's own first cause. On a page, every not-passed case a reader sees in full belongs to one
:class:`Cause`; within a spec its cases sit in one :class:`FailureBlock`. The cause's *lead*
case (the first of its cases in the most important part: core before stretch) is shown in full
once per page; every other case is one line, still with its own anchor. A hidden case a
student sees as one bit belongs to no cause: its message is the same whatever went wrong, so
grouping it would tell nothing, and grouping it by its real cause would tell too much.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.judging.first_cause import PARTS, cause_key, cause_of, failed_record, rank_key, record_cause
from grader.judging.results import CauseAt

from .cases import CaseView
from .specs import SpecView
from .tags import tag_group
from .text import slug

__all__ = ["PARTS", "Cause", "FailureBlock", "FixFirst", "PageCauses", "class_cause", "fix_first", "page_causes"]


def class_cause(case) -> str:
    """A failure's cause across a class (the summary's rows), from its verdict records, never its
    message: the claim of the record that failed first (the same check reads the same in every
    student's report, whatever line of their code it names), with its cause key; a case with no
    failed record (a timeout, a crash) by its status."""
    line = failed_record(case)
    if line is None or cause_of(case) == "missing":
        return record_cause(case)
    return f"{line.what} ({cause_of(case)})"


def case_anchor(spec: SpecView, case: CaseView) -> str:
    """The id of a case on its page (a link from anywhere lands on it, collapsed or not)."""
    return f"{spec.anchor}-{slug(case.label)}"


@dataclass(frozen=True)
class StoppedCase:
    """One not-passed case, as a line of the page."""

    view: CaseView
    spec_anchor: str
    spec_title: str
    anchor: str
    part: str  # core / stricter / stretch / other: the group of its spec (tags.tag_group)
    points: float  # the points it did not earn
    order: int  # its place on the page


@dataclass(frozen=True)
class Cause:
    """One cause of failure on one page and every case it stops, in page order."""

    key: str
    cases: tuple[StoppedCase, ...]

    @property
    def points(self) -> float:
        return round(sum(c.points for c in self.cases), 2)

    def part_points(self, part: str) -> float:
        return round(sum(c.points for c in self.cases if c.part == part), 2)

    @property
    def core_points(self) -> float:
        return self.part_points("core")

    @property
    def part(self) -> str:
        """The most important part it stops a case of (core before stretch)."""
        return min((c.part for c in self.cases), key=PARTS.index)

    @property
    def lead(self) -> StoppedCase:
        """The case shown in full: its first in the most important part."""
        return next(c for c in self.cases if c.part == self.part)

    @property
    def message(self) -> str:
        return self.lead.view.message

    @property
    def n_cases(self) -> int:
        return len(self.cases)

    @property
    def spec_anchors(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.spec_anchor for c in self.cases))

    @property
    def n_specs(self) -> int:
        return len(self.spec_anchors)

    def rank_key(self) -> tuple:
        """The grader's ranking (grader.judging.first_cause.rank_key): core points stopped first,
        then core cases, then all points stopped, then cases, then page order."""
        return rank_key(((c.part, c.points) for c in self.cases), self.cases[0].order)


@dataclass(frozen=True)
class FailureBlock:
    """The cases of one spec that one cause stops: one block of the spec's section. The block
    holding the cause's lead case shows it in full; every other block points there."""

    cause: Cause
    cases: tuple[StoppedCase, ...]  # the lead first when this block holds it
    home: bool

    @property
    def first(self) -> StoppedCase:
        return self.cases[0]

    @property
    def rest(self) -> tuple[StoppedCase, ...]:
        return self.cases[1:]

    @property
    def elsewhere(self) -> tuple[StoppedCase, ...]:
        """The first case of each other spec's block of this cause (the home block links them)."""
        mine = self.first.spec_anchor
        seen: dict[str, StoppedCase] = {}
        for c in self.cause.cases:
            if c.spec_anchor != mine:
                seen.setdefault(c.spec_anchor, c)
        return tuple(seen.values())

    def count_in(self, spec_anchor: str) -> int:
        return sum(1 for c in self.cause.cases if c.spec_anchor == spec_anchor)


@dataclass(frozen=True)
class PageCauses:
    """Every cause of one page's not-passed cases (ranked: the first is to fix first) and the
    blocks each spec's section shows."""

    causes: tuple[Cause, ...]
    blocks: tuple[tuple[str, tuple[FailureBlock, ...]], ...]  # (spec anchor, its blocks)

    def blocks_of(self, spec_anchor: str) -> tuple[FailureBlock, ...]:
        for anchor, blocks in self.blocks:
            if anchor == spec_anchor:
                return blocks
        return ()


def page_causes(specs: tuple[SpecView, ...]) -> PageCauses:
    """Group the not-passed cases shown in full (never a hidden case a student sees as one bit)
    by cause, rank the causes, and lay them out per spec."""
    by_key: dict[tuple[str, str], list[StoppedCase]] = {}
    order = 0
    for s in specs:
        for c in s.open_cases:
            if c.redacted:
                continue
            stopped = StoppedCase(
                view=c,
                spec_anchor=s.anchor,
                spec_title=s.spec.title,
                anchor=case_anchor(s, c),
                part=tag_group(c.tag or s.spec.tag, s.spec.reading),
                points=max(0.0, c.max_score - c.score),
                order=order,
            )
            order += 1
            by_key.setdefault(cause_key(c), []).append(stopped)  # one bug, one cause (the grader's key)
    causes = sorted((Cause(key=key[1], cases=tuple(cases)) for key, cases in by_key.items()), key=Cause.rank_key)
    blocks: list[tuple[str, tuple[FailureBlock, ...]]] = []
    for s in specs:
        mine = []
        for cause in causes:
            here = tuple(c for c in cause.cases if c.spec_anchor == s.anchor)
            if not here:
                continue
            home = cause.lead.spec_anchor == s.anchor
            if home:
                here = (cause.lead, *(c for c in here if c is not cause.lead))
            mine.append(FailureBlock(cause=cause, cases=here, home=home))
        mine.sort(key=lambda b: min(c.order for c in b.cases))  # the spec's own case order
        blocks.append((s.anchor, tuple(mine)))
    return PageCauses(causes=tuple(causes), blocks=tuple(blocks))


MAX_NEXT = 3  # causes listed after the first in "Fix this first"


@dataclass(frozen=True)
class FixFirst:
    """The cause a student should fix first: the one that stops the most core points (then the
    most points), with the points it stops and the causes to fix after it."""

    cause: str
    message: str  # its lead case's own message
    n_cases: int
    n_specs: int
    anchor: str  # the lead case's id
    spec_title: str
    case_label: str
    points: float
    core_points: float
    part: str  # core / stricter / stretch / other: the most important part it stops
    then: tuple[Cause, ...] = ()


def fix_first(
    specs: tuple[SpecView, ...], causes: PageCauses | None = None, first: CauseAt | None = None
) -> FixFirst | None:
    """The cause holding ``first``, the report's own first cause for this page's reader
    (report.json's ``first_cause``), so that the page, the terminal and report.json name one
    cause; without it (a report written before the grader recorded it), the first of the page's
    ranked causes that has a message (a hidden case's cause is never used: to a student it is
    one bit), ranked the same way."""
    ranked = [c for c in (causes or page_causes(specs)).causes if c.message]
    if not ranked:
        return None
    if first is not None:
        holding = [c for c in ranked if any(f"{s.view.spec}/{s.view.label}" == first.case for s in c.cases)]
        ranked = holding + [c for c in ranked if c not in holding]
    top = ranked[0]
    lead = top.lead
    return FixFirst(
        cause=top.key,
        message=top.message,
        n_cases=top.n_cases,
        n_specs=top.n_specs,
        anchor=lead.anchor,
        spec_title=lead.spec_title,
        case_label=lead.view.label,
        points=top.points,
        core_points=top.core_points,
        part=top.part,
        then=tuple(ranked[1 : 1 + MAX_NEXT]),
    )
