"""Behaviour tags (a fixed vocabulary, in this order; the one list is in grader/spec_model.py):
their group (core, stretch, other), their order, and the points a report earned per tag."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from grader.judging.results import CaseResult, SpecSummary
from grader.spec_model import CORE_TAGS, TAGS

from .formats import percent
from .labels import GROUP_TITLES, tag_label

STRETCH_TAGS: tuple[str, ...] = tuple(t for t in TAGS if t not in CORE_TAGS)


def tag_group(tag: str) -> str:
    """``core``, ``stretch`` or ``other`` (a tag outside the fixed vocabulary)."""
    if tag in CORE_TAGS:
        return "core"
    if tag in STRETCH_TAGS:
        return "stretch"
    return "other"


def tag_sort_key(tag: str) -> tuple[int, str]:
    return (TAGS.index(tag), "") if tag in TAGS else (len(TAGS), tag)


@dataclass(frozen=True)
class TagView:
    tag: str
    label: str
    group: str
    score: float
    max_score: float
    n_specs: int
    n_cases: int = 0
    n_passed: int = 0

    @property
    def percent(self) -> float:
        return percent(self.score, self.max_score)


@dataclass(frozen=True)
class GroupView:
    name: str  # core / stretch / other
    title: str
    tags: tuple[TagView, ...]
    score: float = 0.0
    max_score: float = 0.0


def tag_groups(specs: Iterable[SpecSummary], cases: Iterable[CaseResult] = ()) -> tuple[GroupView, ...]:
    """Points per behaviour tag (earned vs possible), grouped core / stretch / other."""
    per_tag: dict[str, list[float]] = {}
    for s in specs:
        row = per_tag.setdefault(s.tag, [0.0, 0.0, 0, 0, 0])
        row[0] += s.score
        row[1] += s.max_score
        row[2] += 1
    for c in cases:
        row = per_tag.setdefault(c.tag, [0.0, 0.0, 0, 0, 0])
        row[3] += 1
        row[4] += 1 if c.status == "passed" else 0
    groups = []
    for name in ("core", "stretch", "other"):
        tags = tuple(
            TagView(
                tag=t,
                label=tag_label(t),
                group=name,
                score=v[0],
                max_score=v[1],
                n_specs=int(v[2]),
                n_cases=int(v[3]),
                n_passed=int(v[4]),
            )
            for t, v in sorted(per_tag.items(), key=lambda kv: tag_sort_key(kv[0]))
            if tag_group(t) == name
        )
        if tags:
            groups.append(
                GroupView(
                    name=name,
                    title=GROUP_TITLES[name],
                    tags=tags,
                    score=sum(t.score for t in tags),
                    max_score=sum(t.max_score for t in tags),
                )
            )
    return tuple(groups)
