"""The notebook answers' slots (issue 33): their names (the lab's, lab.yaml: ``answers``), a cited
line, and where to write them.

Shared by the ``cites`` check of a lab's pack, which judges a slot, and the grader-side reader of
a submission's answers (:mod:`grader.judging.answers`).
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.lab import active as active_lab

ANSWERS_FILE = "answers.md"
NOTEBOOK_FILE = "answers.ipynb"


def cited_slots() -> tuple[str, ...]:
    """The slots answered by citing lines of the student's code."""
    return active_lab().cited_slots


def free_slots() -> tuple[str, ...]:
    """The slots answered in words (shown, never scored)."""
    return active_lab().free_slots


def slots() -> tuple[str, ...]:
    return active_lab().answer_slots


def where_to_write() -> str:
    """Where and how a student writes the answers, with an example of the first slot."""
    lab = active_lab()
    example = f", e.g. '{lab.answer_slots[0]}: {lab.module_file}:42'" if lab.answer_slots else ""
    return (
        f"write your answers in {ANSWERS_FILE} next to {lab.module_file} (the template has one), one slot line per "
        f"question{example}"
    )


@dataclass(frozen=True)
class Cited:
    """One cited line: its file, named as the worker's line tracer names it, and its number."""

    file: str
    line: int
