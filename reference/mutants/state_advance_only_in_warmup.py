"""advance() counts warm-up steps only, so step_count stops at the threshold once graphs are on."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (
    (
        "        self._step_count += 1\n",
        "        if self.step_mode() is StepMode.WARMUP:  # should count every step\n"
        "            self._step_count += 1\n",
    ),
)

run_edited_reference(globals(), EDITS)
