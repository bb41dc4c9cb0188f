"""Calls the uncapturable ops directly instead of through run_eager, so they cost no launches."""

from reference.mutants._base import run_edited_reference

TAG = "piecewise"

EDITS = (
    (
        "            x = run_eager(seg_ops, x) if runner is None else runner(x)\n",
        "            if runner is None:\n"
        "                for op in seg_ops:  # called directly, not through run_eager: no launch counted\n"
        "                    x = op(x)\n"
        "            else:\n"
        "                x = runner(x)\n",
    ),
)

run_edited_reference(globals(), EDITS)
