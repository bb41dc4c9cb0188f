"""Helpers for the decode-step lab's mutants: the reference with one realistic mistake in it.

A mutant module holds a one-line docstring (the mistake), its ``TAG`` (the behaviour whose rule
it breaks) and ``EDITS``: plain-text edits of ``reference/decode_step.py``, each a pair
``(before, after)`` where ``before`` occurs exactly once in the reference (indentation and
all). Its last line, ``run_edited_reference(globals(), EDITS)``, executes the edited source as
the mutant module itself, so a mutant file is a complete submission (``decode_step.py``).
An edit whose text no longer matches fails loudly (:class:`MutantEditError`), never silently.

Baselines (``baselines/``) set ``MAX_PERCENT`` instead of ``TAG``: the most they may score.
``run_template(globals())`` makes a baseline the untouched student template.

The same scheme as the CUDA-graph lab's ``reference/mutants/_base.py``; this copy reads this
pack's reference and imports nothing outside the pack. When the engine builds mutants for
every pack, the two become one.
"""

from __future__ import annotations

import linecache
from collections.abc import Sequence
from pathlib import Path

REFERENCE_SOURCE = Path(__file__).resolve().parents[1] / "decode_step.py"
TEMPLATE_SOURCE = Path(__file__).resolve().parents[2] / "student_template" / "decode_step.py"

Edit = tuple[str, str]


class MutantEditError(Exception):
    """An edit's ``before`` text is not in the reference exactly once: update the edit."""


def apply_edits(source: str, edits: Sequence[Edit], mutant: str) -> str:
    """``source`` with every ``(before, after)`` edit applied in order, each ``before`` found
    exactly once in the text as the earlier edits left it."""
    if not edits:
        raise MutantEditError(f"{mutant}: EDITS is empty, so this mutant would be the reference itself")
    for number, (before, after) in enumerate(edits, 1):
        count = source.count(before) if before else 0
        if count != 1:
            where = "is not in" if count == 0 else f"occurs {count} times in"
            raise MutantEditError(
                f"{mutant}: edit {number} of {len(edits)}: {before.strip()[:60]!r} {where} "
                "labs/decode_step/reference/decode_step.py (update the edit's text)"
            )
        source = source.replace(before, after, 1)
    return source


def run_edited_reference(namespace: dict, edits: Sequence[Edit]) -> None:
    """Execute the reference with ``edits`` applied in ``namespace`` (the mutant's ``globals()``),
    keeping the mutant's own docstring."""
    mutant = Path(namespace.get("__file__") or "a mutant").name
    source = apply_edits(REFERENCE_SOURCE.read_text(encoding="utf-8"), edits, mutant)
    _run(namespace, source, f"{REFERENCE_SOURCE} (edited by {mutant})")


def run_template(namespace: dict) -> None:
    """Execute the untouched student template in ``namespace`` (a baseline's ``globals()``)."""
    _run(namespace, TEMPLATE_SOURCE.read_text(encoding="utf-8"), str(TEMPLATE_SOURCE))


def _run(namespace: dict, source: str, filename: str) -> None:
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    doc = namespace.get("__doc__")
    exec(compile(source, filename, "exec", dont_inherit=True), namespace)  # noqa: S102 - our own reference
    namespace["__doc__"] = doc
