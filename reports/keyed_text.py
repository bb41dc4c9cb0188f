"""A case's plain-text feedback with the key to its notation, for the hosted graders' pages.

Gradescope and PrairieLearn show a case's text on its own, away from the HTML report's
notes: a ``float32[4, 8] seed 1`` or ``is_capturable=CEC`` there needs its key beside it.
"""

from __future__ import annotations

from .view import CaseView, case_notes, case_text


def case_text_with_key(view: CaseView, hint: str = "") -> str:
    """:func:`reports.view.case_text`, then ``Notation:`` and one line per short form it uses
    (nothing for a redacted case: its fixed one-bit message uses none)."""
    text = case_text(view, hint)
    notes = () if view.redacted else case_notes(view)
    if not notes:
        return text
    return text + "\n\nNotation:\n" + "\n".join(f"  {note}" for note in notes)
