"""A fresh machine's step_count is 1, not 0."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "step-count"

EDITS = (
    (
        "        self._step_count = 0\n",
        "        self._step_count = 1  # should start at 0\n",
    ),
)

run_edited_reference(globals(), EDITS)
