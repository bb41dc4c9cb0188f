"""The loop records seq_step 0, the plan's placeholder, instead of the step's own."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-loop"

EDITS = (
    (
        "machine.record_capture(captured.graph_id, batch_size, seq_step)",
        "machine.record_capture(captured.graph_id, batch_size, 0)  # should be seq_step",
    ),
)

run_edited_reference(globals(), EDITS)
