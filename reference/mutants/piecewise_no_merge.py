"""Gives every op its own segment instead of merging neighbours with the same is_capturable answer."""

from reference.mutants._base import run_edited_reference

TAG = "piecewise"

EDITS = (
    (
        "            if self.segments and self.segments[-1][0] == capturable:\n"
        "                self.segments[-1][1].append(op)\n"
        "            else:\n"
        "                self.segments.append((capturable, [op]))\n",
        "            self.segments.append((capturable, [op]))  # never merged with the segment before\n",
    ),
)

run_edited_reference(globals(), EDITS)
