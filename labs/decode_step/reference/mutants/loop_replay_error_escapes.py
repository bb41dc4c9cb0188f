"""A replay that fails lets its error out of step() instead of running the step normally."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "replay-fallback"

EDITS = (
    (
        "            try:\n                return self.engine.replay(machine.graph_id, batch_size, seq_step)\n            except Exception:\n                machine.disable()  # a graph that fails to replay is not tried again\n                return self.engine.run(batch_size, seq_step)\n",
        "            return self.engine.replay(machine.graph_id, batch_size, seq_step)  # should fall back on failure\n",
    ),
)

run_edited_reference(globals(), EDITS)
