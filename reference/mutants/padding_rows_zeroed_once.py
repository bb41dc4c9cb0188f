"""Zeroes the padded rows only when the buffer is made, so a smaller batch after a larger one leaves stale rows behind."""

from reference.mutants._base import run_edited_reference

TAG = "padding"

EDITS = (
    (
        "        static_input[rows:] = 0\n",
        "        # forgot static_input[rows:] = 0: rows of a bigger earlier batch stay\n",
    ),
)

run_edited_reference(globals(), EDITS)
