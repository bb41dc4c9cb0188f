"""A failed capture marks the attempt but leaves graphs on instead of disabling them."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-fallback"

EDITS = (
    (
        "                machine.disable()  # a failed capture: no graph, and no retry\n",
        "                machine.capture_attempted = True  # should disable()\n",
    ),
)

run_edited_reference(globals(), EDITS)
