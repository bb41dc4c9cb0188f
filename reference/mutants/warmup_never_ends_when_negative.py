"""Ends warm-up when the eager count equals warmup_steps, so a negative warmup_steps warms up forever and never captures."""

from reference.mutants._base import export, fresh_reference

TAG = "warmup"

ref = fresh_reference(__name__)


def _warming_up(self, key):
    done = self._eager_calls.get(key, 0)
    if done != self.warmup_steps:
        self._eager_calls[key] = done + 1
        return True
    return False


ref.GraphRunner._warming_up = _warming_up

export(ref, globals())
