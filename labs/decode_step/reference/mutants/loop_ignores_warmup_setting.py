"""The loop builds its machine with a warm-up of 3 whatever the configuration says."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-config"

EDITS = (
    (
        "            self.config.graph_warmup_steps, enabled=self.config.enable_decode_graphs\n",
        "            3, enabled=self.config.enable_decode_graphs  # should use config.graph_warmup_steps\n",
    ),
)

run_edited_reference(globals(), EDITS)
