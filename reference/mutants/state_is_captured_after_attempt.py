"""is_captured reports whether a capture was attempted, not whether one was recorded."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


ref.InferenceGraphCapture.is_captured = property(lambda self: self.capture_attempted)

export(ref, globals())
