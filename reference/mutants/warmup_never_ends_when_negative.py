"""Ends warm-up when the eager count equals warmup_steps, so a negative warmup_steps warms up forever and never captures."""

from reference.mutants._base import run_edited_reference

TAG = "warmup"

EDITS = (("if done < self.warmup_steps:", "if done != self.warmup_steps:"),)

run_edited_reference(globals(), EDITS)
