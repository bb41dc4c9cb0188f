"""Never updates entry.output on replay: the GraphEntry keeps the capture's result (graphgrade's stricter reading)."""

from reference.mutants._base import run_edited_reference

TAG = "static-buffer"

EDITS = (("        entry.output = y\n", "        pass  # should store the replay's result: entry.output = y\n"),)

run_edited_reference(globals(), EDITS)
