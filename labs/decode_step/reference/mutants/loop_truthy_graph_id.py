"""The loop records a capture only when the graph id is truthy, so graph 0 is lost."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-loop"

EDITS = (
    (
        "            machine.record_capture(captured.graph_id, batch_size, seq_step)\n",
        "            if captured.graph_id:  # graph 0 is a graph\n                machine.record_capture(captured.graph_id, batch_size, seq_step)\n",
    ),
)

run_edited_reference(globals(), EDITS)
