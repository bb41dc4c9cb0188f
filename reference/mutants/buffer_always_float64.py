"""Allocates every static buffer as float64, whatever the input's dtype."""

from reference.mutants._base import run_edited_reference

TAG = "static-buffer"

EDITS = (
    (
        "        static_input = np.zeros(key, dtype=x.dtype)\n",
        "        static_input = np.zeros(key)  # numpy's default dtype, float64\n",
    ),
)

run_edited_reference(globals(), EDITS)
