"""Only a warm-up of exactly 0 is raised to 1; negative values are kept."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "warmup-clamp"

EDITS = (
    (
        "        self.warmup_steps = max(1, warmup_steps)\n",
        "        self.warmup_steps = 1 if warmup_steps == 0 else warmup_steps  # every value below 1\n",
    ),
)

run_edited_reference(globals(), EDITS)
