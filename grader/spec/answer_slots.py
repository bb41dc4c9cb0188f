"""The notebook answers' slots (issue 33): their names, a cited line, and where to write them.

Shared by the ``cites`` check (:mod:`grader.spec.checks.cites`), which judges a slot, and the
grader-side reader of a submission's answers (:mod:`grader.judging.answers`).
"""

from __future__ import annotations

from dataclasses import dataclass

CITED_SLOTS = ("constraint-1", "constraint-2", "win")
FREE_SLOT = "two-graphs"
SLOTS = CITED_SLOTS + (FREE_SLOT,)
ANSWERS_FILE = "answers.md"
NOTEBOOK_FILE = "answers.ipynb"
WHERE_TO_WRITE = (
    f"write your answers in {ANSWERS_FILE} next to cudagraph.py (the template has one), one slot line per "
    "question, e.g. 'constraint-1: cudagraph.py:42'"
)


@dataclass(frozen=True)
class Cited:
    """One cited line: its file, named as the worker's line tracer names it, and its number."""

    file: str
    line: int
