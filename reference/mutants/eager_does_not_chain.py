"""run_eager hands every op the original input instead of the previous op's result."""

from reference.mutants._base import run_edited_reference

TAG = "eager"

EDITS = (
    (
        "    for op in ops:\n        x = op(x)\n        LaunchCounter.bump(1)\n    return x\n",
        "    y = x\n"
        "    for op in ops:\n"
        "        y = op(x)  # should be op(y)\n"
        "        LaunchCounter.bump(1)\n"
        "    return y\n",
    ),
)

run_edited_reference(globals(), EDITS)
