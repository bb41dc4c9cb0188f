"""The loop never checks the shape before replaying; a changed batch is only caught when its replay fails."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-fallback"

EDITS = (
    (
        "            if not (machine.is_captured and machine.check_static_shape(batch_size, seq_step)):\n",
        "            if not machine.is_captured:  # should also check_static_shape\n",
    ),
)

run_edited_reference(globals(), EDITS)
