"""advance() counts only while graphs are enabled, so a disabled machine stops counting."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "step-count"

EDITS = (
    (
        "        self._step_count += 1\n",
        "        if self._enabled:  # should count every step\n            self._step_count += 1\n",
    ),
)

run_edited_reference(globals(), EDITS)
