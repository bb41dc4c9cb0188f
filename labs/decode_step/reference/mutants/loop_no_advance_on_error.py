"""A step whose engine call fails is not counted (advance() is skipped)."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-loop"

EDITS = (
    (
        "        try:\n            return self._run_step(batch_size, seq_step)\n        finally:\n            self.graph_capture.advance()\n",
        "        tokens = self._run_step(batch_size, seq_step)\n        self.graph_capture.advance()  # should run even when the step fails\n        return tokens\n",
    ),
)

run_edited_reference(globals(), EDITS)
