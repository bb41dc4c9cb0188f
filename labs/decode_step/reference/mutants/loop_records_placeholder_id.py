"""The loop records graph id 0, the plan's placeholder, instead of the engine's id."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-loop"

EDITS = (
    (
        "machine.record_capture(captured.graph_id, batch_size, seq_step)",
        "machine.record_capture(0, batch_size, seq_step)  # should be captured.graph_id",
    ),
)

run_edited_reference(globals(), EDITS)
