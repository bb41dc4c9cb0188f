"""disable() turns graphs off for the current step only; later steps use graphs again."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (
    (
        "    def step_mode(self) -> StepMode:\n",
        "    def step_mode(self) -> StepMode:\n"
        '        if getattr(self, "disabled_at", None) == self._step_count:\n'
        "            return StepMode.WARMUP\n",
    ),
    ("        self._enabled = False\n", "        self.disabled_at = self._step_count  # off for this step only\n"),
)

run_edited_reference(globals(), EDITS)
