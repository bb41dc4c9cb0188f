"""num_graphs counts every segment, the eager ones included."""

from reference.mutants._base import run_edited_reference

TAG = "piecewise"

EDITS = (
    ("return sum(capturable for capturable, _ in self.segments)", "return len(self.segments)  # eager segments too"),
)

run_edited_reference(globals(), EDITS)
