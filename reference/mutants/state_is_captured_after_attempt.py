"""is_captured reports whether a capture was attempted, not whether one was recorded."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (("return self.graph_id is not None", "return self.capture_attempted  # should be: a graph was recorded"),)

run_edited_reference(globals(), EDITS)
