"""Copies each replay's input into a newly allocated buffer instead of the graph's own static buffer."""

from reference.mutants._base import run_edited_reference

TAG = "static-buffer"

EDITS = (
    (
        "        self._load(entry.static_input, x)\n",
        "        entry.static_input = np.zeros(entry.shape, dtype=x.dtype)  # new buffer; the graph reads the old\n"
        "        self._load(entry.static_input, x)\n",
    ),
)

run_edited_reference(globals(), EDITS)
