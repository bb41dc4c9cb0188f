"""The loop replays graph 0 instead of the recorded graph id."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "graph-replay"

EDITS = (
    (
        "self.engine.replay(machine.graph_id, batch_size, seq_step)",
        "self.engine.replay(0, batch_size, seq_step)  # should be machine.graph_id",
    ),
)

run_edited_reference(globals(), EDITS)
