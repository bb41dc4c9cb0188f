"""Fuses adjacent elementwise ops two at a time, so a run of three becomes a pair and a lone op."""

from reference.mutants._base import run_edited_reference

TAG = "fusion"

EDITS = (
    (
        "            run.append(op)\n",
        "            run.append(op)\n"
        "            if len(run) == 2:  # closes every pair, so a run of three splits\n"
        "                close_run()\n",
    ),
)

run_edited_reference(globals(), EDITS)
