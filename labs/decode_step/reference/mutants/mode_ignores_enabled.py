"""step_mode never looks at the enabled flag, so a machine built without enabled=True still captures."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "step-mode"

EDITS = (
    (
        "        if not self._enabled or self._step_count < self.warmup_steps:\n",
        "        if self._step_count < self.warmup_steps:  # should also answer WARMUP while disabled\n",
    ),
)

run_edited_reference(globals(), EDITS)
