"""The reference's state machine with DecodeConfig and DecodeLoop left unwritten."""

from labs.decode_step.reference.mutants._base import run_edited_reference

# The machine's own behaviours are 43 points (step-count 6, step-mode 12, capture-record 8,
# static-shape 8, warmup-clamp 5, disable 4), less the warm-up case that needs a loop (1). More
# means a case of the loop's behaviours passes without a loop.
MAX_PERCENT = 43.0

EDITS = (
    (
        "    graph_warmup_steps: int = 3\n",
        "    graph_warmup_steps: int = 3\n\n    def __post_init__(self) -> None:\n        raise NotImplementedError\n",
    ),
    (
        "        self.engine = engine\n",
        "        raise NotImplementedError\n",
    ),
    (
        "        try:\n            return self._run_step(batch_size, seq_step)\n",
        "        raise NotImplementedError\n        try:\n            return self._run_step(batch_size, seq_step)\n",
    ),
)

run_edited_reference(globals(), EDITS)
