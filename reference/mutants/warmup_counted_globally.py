"""Counts warm-up calls once for the whole runner instead of per graph key."""

from reference.mutants._base import export, fresh_reference

TAG = "warmup"

ref = fresh_reference(__name__)


def _warming_up(self, key):
    done = self._eager_calls.get("all keys", 0)
    if done < self.warmup_steps:
        self._eager_calls["all keys"] = done + 1
        return True
    return False


ref.GraphRunner._warming_up = _warming_up

export(ref, globals())
