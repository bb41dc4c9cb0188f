"""is_captured tests the graph id's truth value, so graph 0 does not count."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "capture-record"

EDITS = (
    (
        "        return self.graph_id is not None\n",
        "        return bool(self.graph_id)  # graph 0 is a graph\n",
    ),
)

run_edited_reference(globals(), EDITS)
