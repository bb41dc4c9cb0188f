"""Raises warmup_steps to 1 only when it is exactly 0, so a negative warm-up replays from step 0 and never captures."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)
_init = ref.InferenceGraphCapture.__init__


def __init__(self, warmup_steps, enabled=False):
    _init(self, warmup_steps, enabled)
    self.warmup_steps = 1 if warmup_steps == 0 else warmup_steps


ref.InferenceGraphCapture.__init__ = __init__

export(ref, globals())
