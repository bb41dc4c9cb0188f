"""The loop runs every replay step normally (the plan's placeholder): all core, no replay."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "graph-replay"

EDITS = (
    (
        "                return self.engine.replay(machine.graph_id, batch_size, seq_step)\n",
        "                return self.engine.run(batch_size, seq_step)  # should replay the graph\n",
    ),
)

run_edited_reference(globals(), EDITS)
