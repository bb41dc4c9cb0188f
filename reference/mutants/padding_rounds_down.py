"""Pads a batch to the largest capture size not above it (rounds down), so the real rows do not fit."""

from reference.mutants._base import run_edited_reference

TAG = "padding"

EDITS = (
    (
        "        for size in self.capture_sizes:\n            if size >= n:\n",
        "        for size in reversed(self.capture_sizes):\n            if size <= n:  # rounds down\n",
    ),
)

run_edited_reference(globals(), EDITS)
