"""Replays through run_eager, paying one launch per op instead of one per graph."""

from reference.mutants._base import run_edited_reference

TAG = "single-launch-replay"

EDITS = (
    (
        "        y = entry.static_input\n"
        "        for op in self.ops:\n"
        "            y = op(y)\n"
        "        LaunchCounter.bump(1)\n",
        "        y = run_eager(self.ops, entry.static_input)  # one launch per op, not one per graph\n",
    ),
)

run_edited_reference(globals(), EDITS)
