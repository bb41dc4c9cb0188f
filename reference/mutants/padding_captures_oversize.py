"""Captures a graph of the batch's own size when it is above the largest capture size, instead of running it eagerly."""

from reference.mutants._base import run_edited_reference

TAG = "padding"

EDITS = (
    (
        "                return size\n        return None\n",
        "                return size\n        return n  # should be None: run eagerly, capture nothing\n",
    ),
)

run_edited_reference(globals(), EDITS)
