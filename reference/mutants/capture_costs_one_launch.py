"""Counts a capture as a single launch, like a replay, instead of one launch per op."""

from reference.mutants._base import run_edited_reference

TAG = "shape-cache"

EDITS = (
    (
        "        output = run_eager(self.ops, static_input)\n",
        "        output = static_input\n"
        "        for op in self.ops:\n"
        "            output = op(output)\n"
        "        LaunchCounter.bump(1)  # should be one launch per op, as run_eager pays\n",
    ),
)

run_edited_reference(globals(), EDITS)
