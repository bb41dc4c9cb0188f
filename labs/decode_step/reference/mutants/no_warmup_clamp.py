"""warmup_steps is used as given, so a warm-up of 0 captures the very first step."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "warmup-clamp"

EDITS = (
    (
        "        self.warmup_steps = max(1, warmup_steps)\n",
        "        self.warmup_steps = warmup_steps  # should be at least 1\n",
    ),
)

run_edited_reference(globals(), EDITS)
