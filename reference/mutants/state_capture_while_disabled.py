"""step_mode ignores whether graphs are enabled, so a disabled machine still captures and replays."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (
    (
        "if not self._enabled or self._step_count < self.warmup_steps:",
        "if self._step_count < self.warmup_steps:  # ignores whether graphs are enabled",
    ),
)

run_edited_reference(globals(), EDITS)
