"""Staff only: the submissions whose code an integrity flag asks a person to look at.

Rendered into ``summary.html`` by the ``_review.html.j2`` partial; never into anything a
student sees (report.html, results.json, junit.xml). See :mod:`grader.judging.integrity`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grader.judging.results import Flag, Report

from . import view as v

SHOWN_FLAGS = 12  # per submission, in the summary; report.json has them all


@dataclass(frozen=True)
class ReviewRow:
    name: str
    href: str
    rules: tuple[str, ...]
    flags: tuple[Flag, ...]  # the first SHOWN_FLAGS
    n_flags: int


def needs_review(reports: Sequence[Report], hrefs: Sequence[str]) -> list[ReviewRow]:
    """One row per flagged submission, by name; ``hrefs[i]`` is report i's (already safe) link."""
    rows = [
        ReviewRow(
            name=v.one_line(r.submission, 200) or "(unnamed)",
            href=href,
            rules=tuple(sorted({f.rule for f in r.flags})),
            flags=tuple(r.flags[:SHOWN_FLAGS]),
            n_flags=len(r.flags),
        )
        for r, href in zip(reports, hrefs)
        if r.flags
    ]
    return sorted(rows, key=lambda row: (row.name.lower(), row.name))
