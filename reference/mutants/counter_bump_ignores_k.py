"""LaunchCounter.bump(k) adds 1 whatever k is."""

from reference.mutants._base import run_edited_reference

TAG = "launch-counter"

EDITS = (("cls.n += k", "cls.n += 1"),)

run_edited_reference(globals(), EDITS)
