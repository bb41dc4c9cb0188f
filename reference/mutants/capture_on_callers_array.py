"""At capture, runs the ops on the caller's array rather than on the new static buffer."""

from reference.mutants._base import run_edited_reference

TAG = "static-buffer"

EDITS = (
    ("output = run_eager(self.ops, static_input)", "output = run_eager(self.ops, x)  # should run on static_input"),
)

run_edited_reference(globals(), EDITS)
