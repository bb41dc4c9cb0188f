"""is_captured tests the graph id for truth, so a graph with id 0 reads as not captured."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


ref.InferenceGraphCapture.is_captured = property(lambda self: bool(self.graph_id))

export(ref, globals())
