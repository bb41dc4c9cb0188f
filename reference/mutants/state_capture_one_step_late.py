"""step_mode warms up while step_count <= warmup_steps, so CAPTURE comes one step late."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (
    ("self._step_count < self.warmup_steps:", "self._step_count <= self.warmup_steps:"),
    ("if self._step_count == self.warmup_steps and", "if self._step_count == self.warmup_steps + 1 and"),
)

run_edited_reference(globals(), EDITS)
