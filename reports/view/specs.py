"""The specs of one report, each with its cases as the reader may see them."""

from __future__ import annotations

from dataclasses import dataclass

from grader.judging.results import Report, SpecSummary

from .cases import CaseView, case_views
from .text import slug


@dataclass(frozen=True)
class SpecView:
    spec: SpecSummary
    anchor: str
    cases: tuple[CaseView, ...]

    @property
    def n_passed(self) -> int:
        return sum(1 for c in self.cases if c.passed)

    @property
    def state(self) -> str:
        """``passed``, ``partial``, ``failed`` or ``notrun``."""
        if not self.cases:
            return "notrun"
        if self.n_passed == len(self.cases):
            return "passed"
        return "partial" if self.n_passed else "failed"

    @property
    def open_cases(self) -> tuple[CaseView, ...]:
        return tuple(c for c in self.cases if not c.passed)


def spec_views(report: Report, staff: bool = False) -> tuple[SpecView, ...]:
    views = case_views(report, staff)
    out = []
    seen_anchors: set[str] = set()
    specs = list(report.specs)
    known = {s.id for s in specs}
    # A case whose spec has no summary still shows, under a plain stand-in (never dropped).
    for c in report.cases:
        if c.spec not in known:
            known.add(c.spec)
            mine = [x for x in report.cases if x.spec == c.spec]
            total = sum(x.max_score for x in mine)
            specs.append(
                SpecSummary(
                    id=c.spec,
                    title=c.spec,
                    tag=c.tag,
                    points=total,
                    visibility="visible",
                    explanation="",
                    hint="",
                    score=sum(x.score for x in mine),
                    max_score=total,
                )
            )
    for i, spec in enumerate(specs):
        anchor = f"spec-{slug(spec.id)}"
        if anchor in seen_anchors:
            anchor = f"{anchor}-{i}"
        seen_anchors.add(anchor)
        out.append(SpecView(spec=spec, anchor=anchor, cases=tuple(v for v in views if v.spec == spec.id)))
    return tuple(out)


def spec_titles(report: Report) -> dict[str, SpecSummary]:
    return {s.id: s for s in report.specs}
