"""Raises warmup_steps to 1 only when it is exactly 0, so a negative warm-up replays from step 0 and never captures."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (("self.warmup_steps = max(1, warmup_steps)", "self.warmup_steps = 1 if warmup_steps == 0 else warmup_steps"),)

run_edited_reference(globals(), EDITS)
