"""With a warm-up asked for, runs warmup_steps + 1 eager calls per key before capturing (<= instead of <)."""

from reference.mutants._base import run_edited_reference

TAG = "warmup"

EDITS = (
    (
        "        done = self._eager_calls.get(key, 0)\n        if done < self.warmup_steps:\n",
        "        if not self.warmup_steps:  # no warm-up asked for: capture at once\n"
        "            return False\n"
        "        done = self._eager_calls.get(key, 0)\n"
        "        if done <= self.warmup_steps:\n",
    ),
)

run_edited_reference(globals(), EDITS)
