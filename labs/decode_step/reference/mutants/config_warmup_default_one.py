"""DecodeConfig's default warm-up is 1 step, not 3."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-config"

EDITS = (
    (
        "    graph_warmup_steps: int = 3\n",
        "    graph_warmup_steps: int = 1  # the default is 3\n",
    ),
)

run_edited_reference(globals(), EDITS)
