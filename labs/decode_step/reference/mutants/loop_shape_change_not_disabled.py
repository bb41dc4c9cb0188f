"""A changed shape runs normally but leaves graphs on, so the graph is replayed again later."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-fallback"

EDITS = (
    (
        "                machine.disable()  # the batch changed shape: this graph no longer fits\n",
        "                pass  # should disable()\n",
    ),
)

run_edited_reference(globals(), EDITS)
