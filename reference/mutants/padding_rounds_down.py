"""Pads a batch to the largest capture size not above it (rounds down), so the real rows do not fit."""

from reference.mutants._base import export, fresh_reference

TAG = "padding"

ref = fresh_reference(__name__)


def _padded_batch(self, n):
    if self.capture_sizes is None:
        return n
    fitting = [size for size in self.capture_sizes if size <= n]
    return max(fitting) if fitting else None


ref.GraphRunner._padded_batch = _padded_batch

export(ref, globals())
