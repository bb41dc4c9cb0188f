"""Captures on every call: the graph table is written but never looked up, so nothing is replayed."""

from reference.mutants._base import run_edited_reference

TAG = "shape-cache"

EDITS = (
    (
        "        entry = self.graphs.get(key)  # Constraint 1: one graph per shape\n"
        "        if entry is not None:\n"
        "            return self._replay(entry, x)\n",
        "        # forgot to look the key up in self.graphs: every call captures again\n",
    ),
)

run_edited_reference(globals(), EDITS)
