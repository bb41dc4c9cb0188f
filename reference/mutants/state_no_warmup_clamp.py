"""Keeps warmup_steps=0 as given instead of raising it to 1, so step 0 captures cold kernels."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (("self.warmup_steps = max(1, warmup_steps)", "self.warmup_steps = warmup_steps  # no max(1, ...)"),)

run_edited_reference(globals(), EDITS)
