"""Notation: every short form a report uses, explained once per page (the page's key), and
which of them one case uses (its detail links to the key)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from .cases import CaseView, observed_text
from .causes import PageCauses
from .specs import SpecView

_NOTATIONS = (
    (
        re.compile(r"is_capturable=[CE]+"),
        "is_capturable=CEC: one letter per op, in order: C the op may be captured into a graph, E it runs eagerly (attention, for example).",
    ),
    (
        re.compile(r"\w+\[[\d, ]*\] seed \d+"),
        "float32[4, 8] seed 1: an input array of that dtype and shape, filled with standard normal values from random seed 1.",
    ),
    (re.compile(r"\w+\[[\d, ]*\] \(literal\)"), "(literal): an input array whose values the spec lists."),
    (
        re.compile(r"\b(?:add|mul|matmul|attention)\(-?[\d.]+\)"),
        "add(1.5), mul(2), matmul(3), attention(5): the grader's ops (x + 1.5, x \u00d7 2, x times a fixed matrix made from seed 3, attention with seed 5); relu, tanh, sigmoid, exp and softmax are the usual functions.",
    ),
    (re.compile(r"\u2026"), "\u2026: a value cut short; only its first items are shown."),
)


def notation_notes(texts: Iterable[str]) -> tuple[str, ...]:
    """The explanations of the notations that appear in ``texts`` (in a fixed order)."""
    return _notes_in("\n".join(texts))


@functools.lru_cache(maxsize=4096)  # a class's reports repeat the same cases' texts many times over
def _notes_in(joined: str) -> tuple[str, ...]:
    return tuple(note for pattern, note in _NOTATIONS if pattern.search(joined))


def case_texts(view: CaseView) -> tuple[str, ...]:
    """Every text of one case a page may show: its message, steps and checks."""
    return (
        view.message,
        view.description,
        *(s.action for s in view.steps),
        *(s.outcome for s in view.steps),
        *(c.what for c in view.checks),
        *(c.expected for c in view.checks),
        *(observed_text(c) for c in view.checks),
    )


def case_notes(view: CaseView) -> tuple[str, ...]:
    """The notations one case's steps and checks use, explained."""
    return notation_notes(case_texts(view))


def page_notes(specs: Iterable[SpecView], causes: PageCauses) -> tuple[str, ...]:
    """The page's notation key: the notations of what the page shows, each explained once.
    A case shown in full gives all its texts; a case shown as one line its message and
    description; a passed case its description (a hidden case a student sees as one bit: none)."""
    texts: list[str] = []
    for cause in causes.causes:
        texts += case_texts(cause.lead.view)
        texts += (t for c in cause.cases for t in (c.view.message, c.view.description))
    texts += (c.description for s in specs for c in s.cases if c.passed)
    return notation_notes(texts)
