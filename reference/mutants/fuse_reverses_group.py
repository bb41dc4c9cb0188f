"""A fused group composes its ops the wrong way round, applying the last op first."""

from reference.mutants._base import run_edited_reference

TAG = "fusion"

EDITS = (("for op in self.parts:", "for op in reversed(self.parts):"),)

run_edited_reference(globals(), EDITS)
