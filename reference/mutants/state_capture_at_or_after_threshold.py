"""step_mode says CAPTURE whenever step_count >= warmup_steps and no capture was attempted (>= instead of ==)."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (("if self._step_count == self.warmup_steps and", "if self._step_count >= self.warmup_steps and"),)

run_edited_reference(globals(), EDITS)
