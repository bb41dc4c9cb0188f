"""Notation: every short form a report uses, explained where it appears."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .cases import CaseView

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
    joined = "\n".join(texts)
    return tuple(note for pattern, note in _NOTATIONS if pattern.search(joined))


def case_notes(view: CaseView) -> tuple[str, ...]:
    """The notations one case's steps and checks use, explained."""
    return notation_notes(
        [
            view.message,
            *(s.action for s in view.steps),
            *(s.outcome for s in view.steps),
            *(c.what for c in view.checks),
            *(c.expected for c in view.checks),
            *(c.observed for c in view.checks),
        ]
    )
