"""The loop advances the machine before asking for the step's mode, so it captures a step early."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-loop"

EDITS = (
    (
        "        try:\n            return self._run_step(batch_size, seq_step)\n        finally:\n            self.graph_capture.advance()\n",
        "        self.graph_capture.advance()  # should come after the step\n        return self._run_step(batch_size, seq_step)\n",
    ),
)

run_edited_reference(globals(), EDITS)
