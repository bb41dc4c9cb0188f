"""run_eager bumps the counter once per call instead of once per op."""

from reference.mutants._base import run_edited_reference

TAG = "eager"

EDITS = (
    (
        "        x = op(x)\n        LaunchCounter.bump(1)\n",
        "        x = op(x)\n    LaunchCounter.bump(1)  # after the loop: once per call\n",
    ),
)

run_edited_reference(globals(), EDITS)
