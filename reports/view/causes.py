"""Causes: one message per cause, whatever step numbers and counts it names; the causes of one
page's failures, ranked by the points they stop (core points first), each shown in full once;
and the one a student should fix first.

A cause is the failure message with what varies per case taken out (:func:`failure_cause`),
and the case's status. On a page, every not-passed case a reader sees in full belongs to one
:class:`Cause`; within a spec its cases sit in one :class:`FailureBlock`. The cause's *lead*
case (the first of its cases in the most important part: core before stretch) is shown in full
once per page; every other case is one line, still with its own anchor. A hidden case a
student sees as one bit belongs to no cause: its message is the same whatever went wrong, so
grouping it would tell nothing, and grouping it by its real cause would tell too much.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .cases import CaseView
from .specs import SpecView
from .tags import tag_group
from .text import one_line, slug

_STEP_PREFIX = re.compile(r"^Step \d+ \((?P<label>.*?)\): (?P<rest>.*)$", re.S)
_CONSEQUENCE = re.compile(
    r"\s*(?:Steps? [\d\u2013, ]+ needs? its result and did not run[^.]*\.|\d+ checks? of this step could not be made\.)"
)
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:e-?\d+)?")
PARTS = ("core", "stricter", "answers", "stretch", "other")  # the order a student should work in (tags.tag_group)


def _callee(label: str) -> str:
    label = re.sub(r"^\w+ = ", "", label)
    return re.sub(r"\(.*", "(\u2026)", label, flags=re.S)


@lru_cache(maxsize=8192)  # a class repeats the same few messages hundreds of times
def failure_cause(message: str) -> str:
    """A failure message with what varies per case taken out (step numbers and arguments,
    counts, values), so that one cause is one row however many cases it stops."""
    text = one_line(message)
    m = _STEP_PREFIX.match(text)
    if m:
        text = f"{_callee(m.group('label'))}: {m.group('rest')}"
    text = _CONSEQUENCE.sub("", text)
    return _NUMBER.sub("#", text).strip()


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
        """Core points stopped first, then all points stopped (a cause that stops only stretch
        points never comes before one that stops a core case), then cases, then page order."""
        n_core = sum(1 for c in self.cases if c.part == "core")
        return (-self.core_points, -n_core, -self.points, -self.n_cases, self.cases[0].order)


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
            # One bug is one cause: failures naming the same line of the student's code are one
            # cause whatever each check saw there; any other failure, by its message (so is a part
            # not written yet: the part called, not a stub's shared raise line, is what to write).
            by_origin = c.origin and c.cause != "not-written"
            key = (c.status, f"at {c.origin}") if by_origin else (c.status, failure_cause(c.message))
            by_key.setdefault(key, []).append(stopped)
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


def fix_first(specs: tuple[SpecView, ...], causes: PageCauses | None = None) -> FixFirst | None:
    """The first of the page's ranked causes that has a message (a hidden case's cause is never
    used: to a student it is one bit). Ranked by the points it stops, core points first, so
    while a core part is unwritten the student is never sent to a stretch part."""
    ranked = [c for c in (causes or page_causes(specs)).causes if c.message]
    if not ranked:
        return None
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
