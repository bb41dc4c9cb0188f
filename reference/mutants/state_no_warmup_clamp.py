"""Keeps warmup_steps=0 as given instead of raising it to 1, so step 0 captures cold kernels."""

from reference.mutants._base import export, fresh_reference

TAG = "state-machine"

ref = fresh_reference(__name__)


_init = ref.InferenceGraphCapture.__init__


def __init__(self, warmup_steps, enabled=False):
    _init(self, warmup_steps, enabled)
    self.warmup_steps = warmup_steps  # no max(1, ...)


ref.InferenceGraphCapture.__init__ = __init__

export(ref, globals())
