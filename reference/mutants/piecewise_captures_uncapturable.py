"""Ignores is_capturable and captures every op, attention included, into one graph."""

from reference.mutants._base import run_edited_reference

TAG = "piecewise"

EDITS = (("capturable = bool(is_capturable(i))", "capturable = True  # should ask is_capturable(i)"),)

run_edited_reference(globals(), EDITS)
