"""On replay, points the entry's static_input at the caller's array instead of copying into the buffer."""

from reference.mutants._base import run_edited_reference

TAG = "static-buffer"

EDITS = (
    (
        "        self._load(entry.static_input, x)\n",
        "        entry.static_input = x  # rebinds; should copy x into the buffer the graph reads\n",
    ),
)

run_edited_reference(globals(), EDITS)
