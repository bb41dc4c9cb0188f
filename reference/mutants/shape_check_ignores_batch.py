"""check_static_shape compares only seq_step with the captured one, not the batch size."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


def check_static_shape(self, batch_size, seq_step):
    return self._captured_shape is not None and self._captured_shape[1] == seq_step


ref.InferenceGraphCapture.check_static_shape = check_static_shape

export(ref, globals())
