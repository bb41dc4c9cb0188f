"""Takes the first capture size that holds the batch in the order given, not the smallest one."""

from reference.mutants._base import run_edited_reference

TAG = "padding"

EDITS = (("tuple(sorted(capture_sizes))", "tuple(capture_sizes)  # not sorted"),)

run_edited_reference(globals(), EDITS)
