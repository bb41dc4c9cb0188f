"""record_capture stores the graph and its shape but does not mark the capture as attempted."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


def record_capture(self, graph_id, batch_size, seq_step):
    self.graph_id = graph_id
    self._captured_shape = (batch_size, seq_step)


ref.InferenceGraphCapture.record_capture = record_capture

export(ref, globals())
