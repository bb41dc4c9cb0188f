"""A replay that fails runs the step normally but leaves graphs on, so the graph is tried again."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "replay-fallback"

EDITS = (
    (
        "                machine.disable()  # a graph that fails to replay is not tried again\n",
        "                pass  # should disable()\n",
    ),
)

run_edited_reference(globals(), EDITS)
