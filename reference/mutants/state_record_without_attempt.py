"""record_capture stores the graph and its shape but does not mark the capture as attempted."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (("        self.capture_attempted = True\n", "        # forgot self.capture_attempted = True\n"),)

run_edited_reference(globals(), EDITS)
