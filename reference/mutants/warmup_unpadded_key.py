"""Counts warm-up per real input shape instead of per padded graph key."""

from reference.mutants._base import run_edited_reference

TAG = "warmup"

EDITS = (("if self._warming_up(key):", "if self._warming_up(x.shape):  # should be the padded key"),)

run_edited_reference(globals(), EDITS)
