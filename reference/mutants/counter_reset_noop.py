"""LaunchCounter.reset() leaves the count as it was instead of setting it to 0."""

from reference.mutants._base import run_edited_reference

TAG = "launch-counter"

EDITS = (("        cls.n = 0\n", "        pass  # forgot cls.n = 0\n"),)

run_edited_reference(globals(), EDITS)
