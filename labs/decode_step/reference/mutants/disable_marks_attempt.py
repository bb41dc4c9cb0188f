"""disable() marks the capture attempted instead of turning graphs off."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "disable"

EDITS = (
    (
        '    def disable(self) -> None:\n        """Turn graphs off for the rest of the session: every later step is WARMUP."""\n        self._enabled = False\n',
        '    def disable(self) -> None:\n        """Turn graphs off for the rest of the session: every later step is WARMUP."""\n        self.capture_attempted = True  # should turn graphs off\n',
    ),
)

run_edited_reference(globals(), EDITS)
