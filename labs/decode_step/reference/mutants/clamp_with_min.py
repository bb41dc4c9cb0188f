"""warmup_steps is clamped with min() instead of max(), so every warm-up becomes one step."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "warmup-clamp"

EDITS = (
    (
        "        self.warmup_steps = max(1, warmup_steps)\n",
        "        self.warmup_steps = min(1, warmup_steps)  # should be max\n",
    ),
)

run_edited_reference(globals(), EDITS)
