"""Behaviour tags (the lab's vocabulary, in its order: lab.yaml's behaviours, grader.lab):
their group (core, stretch, other), their order, and the points a report earned per tag."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from grader.judging.results import CaseResult, SpecSummary
from grader.lab import active as active_lab
from grader.spec_model import point_group

from .formats import percent
from .labels import GROUP_TITLES, tag_label


def stretch_tags() -> tuple[str, ...]:
    lab = active_lab()
    return tuple(t for t in lab.tags if t not in lab.core_tags)


def tag_group(tag: str, reading: str = "handout") -> str:
    """``core``, ``stricter`` (graphgrade's stricter reading of a core part, counted outside the
    core points), ``answers`` (the notebook answers), ``stretch`` or ``other`` (a tag outside the
    lab's vocabulary)."""
    return point_group(tag, reading) if tag in active_lab().tags else "other"


def tag_sort_key(tag: str) -> tuple[int, str]:
    tags = active_lab().tags
    return (tags.index(tag), "") if tag in tags else (len(tags), tag)


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
    name: str  # core / stricter / stretch / other
    title: str
    tags: tuple[TagView, ...]
    score: float = 0.0
    max_score: float = 0.0


def tag_groups(specs: Iterable[SpecSummary], cases: Iterable[CaseResult] = ()) -> tuple[GroupView, ...]:
    """Points per behaviour tag (earned vs possible), grouped core / stricter / stretch / other: a
    core tag's specs of graphgrade's stricter reading are a group of their own, so the core group's
    total is the handout's core points."""
    per_tag: dict[tuple[str, str], list[float]] = {}
    group_of_spec: dict[str, str] = {}
    for s in specs:
        group = group_of_spec[s.id] = tag_group(s.tag, s.reading)
        row = per_tag.setdefault((group, s.tag), [0.0, 0.0, 0, 0, 0])
        row[0] += s.score
        row[1] += s.max_score
        row[2] += 1
    for c in cases:
        row = per_tag.setdefault((group_of_spec.get(c.spec) or tag_group(c.tag), c.tag), [0.0, 0.0, 0, 0, 0])
        row[3] += 1
        row[4] += 1 if c.status == "passed" else 0
    groups = []
    for name in ("core", "stricter", "answers", "stretch", "other"):
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
            for (g, t), v in sorted(per_tag.items(), key=lambda kv: tag_sort_key(kv[0][1]))
            if g == name
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
