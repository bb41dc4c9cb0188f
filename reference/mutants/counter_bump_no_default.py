"""LaunchCounter.bump has no default for k, so bump() with no argument raises TypeError."""

from reference.mutants._base import run_edited_reference

TAG = "launch-counter"

EDITS = (("def bump(cls, k: int = 1)", "def bump(cls, k: int)"),)

run_edited_reference(globals(), EDITS)
