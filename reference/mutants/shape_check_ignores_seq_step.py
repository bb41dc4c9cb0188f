"""check_static_shape compares only the batch size with the captured one, not seq_step."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


def check_static_shape(self, batch_size, seq_step):
    return self._captured_shape is not None and self._captured_shape[0] == batch_size


ref.InferenceGraphCapture.check_static_shape = check_static_shape

export(ref, globals())
