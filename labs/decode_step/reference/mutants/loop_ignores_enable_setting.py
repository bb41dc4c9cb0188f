"""The loop builds its machine disabled whatever the configuration says."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-config"

EDITS = (
    (
        "            self.config.graph_warmup_steps, enabled=self.config.enable_decode_graphs\n",
        "            self.config.graph_warmup_steps  # should pass enabled=config.enable_decode_graphs\n",
    ),
)

run_edited_reference(globals(), EDITS)
