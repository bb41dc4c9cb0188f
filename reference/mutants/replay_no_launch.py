"""Forgets to bump the counter on replay, so a replay looks free."""

from reference.mutants._base import run_edited_reference

TAG = "single-launch-replay"

EDITS = (
    (
        "        LaunchCounter.bump(1)\n        entry.output = y\n",
        "        entry.output = y  # forgot LaunchCounter.bump(1)\n",
    ),
)

run_edited_reference(globals(), EDITS)
