"""With a warm-up asked for, runs warmup_steps + 1 eager calls per key before capturing (<= instead of <)."""

from reference.mutants._base import export, fresh_reference

TAG = "warmup"

ref = fresh_reference(__name__)


def _warming_up(self, key):
    if not self.warmup_steps:  # no warm-up asked for: capture at once
        return False
    done = self._eager_calls.get(key, 0)
    if done <= self.warmup_steps:
        self._eager_calls[key] = done + 1
        return True
    return False


ref.GraphRunner._warming_up = _warming_up

export(ref, globals())
