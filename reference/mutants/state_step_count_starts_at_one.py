"""step_count counts the step in progress, not the finished ones, so it reads 1 before any advance()."""

from reference.mutants._base import run_edited_reference

TAG = "state-machine"

EDITS = (("        return self._step_count\n", "        return self._step_count + 1  # counts the step in progress\n"),)

run_edited_reference(globals(), EDITS)
