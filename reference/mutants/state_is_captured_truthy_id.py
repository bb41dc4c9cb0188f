"""is_captured tests the graph id for truth, so a graph with id 0 reads as not captured."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (("return self.graph_id is not None", "return bool(self.graph_id)"),)

run_edited_reference(globals(), EDITS)
