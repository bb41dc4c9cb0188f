"""Counts warm-up calls once for the whole runner instead of per graph key."""

from reference.mutants._base import run_edited_reference

TAG = "warmup"

EDITS = (
    ("done = self._eager_calls.get(key, 0)", 'done = self._eager_calls.get("all keys", 0)  # should be per key'),
    ("self._eager_calls[key] = done + 1", 'self._eager_calls["all keys"] = done + 1'),
)

run_edited_reference(globals(), EDITS)
