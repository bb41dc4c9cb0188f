"""The short, kind sentence at the top of a student's report."""

from __future__ import annotations

from dataclasses import dataclass

from grader.judging.results import Report
from grader.lab import active as active_lab


@dataclass(frozen=True)
class Headline:
    mood: str  # all / most / some / none / problem
    title: str
    text: str


def headline(report: Report) -> Headline:
    """A short, kind sentence about where the submission stands."""
    n = len(report.cases)
    ok = sum(1 for c in report.cases if c.status == "passed")
    left = n - ok
    if report.problem:
        return Headline(
            "problem",
            "The grader could not run all of your code",
            "Something stopped the grader before it could try every behaviour. "
            "Fix the problem in the box below first; the rest of this page will fill in once it is gone.",
        )
    if n and left == 0:
        return Headline(
            "all",
            "Every case passes",
            active_lab().all_pass_text or "Every behaviour the specs check works as the lab asks.",
        )
    if n == 0:
        return Headline("none", "Nothing was graded", "No cases ran for this submission.")
    cases = "case" if left == 1 else "cases"
    if ok == 0:
        return Headline(
            "none",
            f"{left} {cases} to go",
            "A fresh start. Begin with the core behaviours at the top: each section says what the grader expected, "
            "what your code did, and why a real inference engine cares.",
        )
    return Headline(
        "most" if ok >= left else "some",
        f"{ok} of {n} cases pass, {left} to go",
        "Each section below shows what the grader expected next to what your code did, with a hint on where to look.",
    )
