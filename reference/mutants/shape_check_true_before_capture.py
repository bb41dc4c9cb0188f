"""check_static_shape says yes before any capture was recorded."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


def check_static_shape(self, batch_size, seq_step):
    return self._captured_shape is None or self._captured_shape == (batch_size, seq_step)


ref.InferenceGraphCapture.check_static_shape = check_static_shape

export(ref, globals())
