"""record_capture stores the graph but never marks the capture attempted."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "capture-record"

EDITS = (
    (
        "        self.graph_id = graph_id\n        self.capture_attempted = True\n",
        "        self.graph_id = graph_id  # should also set capture_attempted\n",
    ),
)

run_edited_reference(globals(), EDITS)
