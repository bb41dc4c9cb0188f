"""Treats an op as elementwise when it merely has an elementwise attribute (hasattr), so matmul, softmax and attention are fused too."""

from reference.mutants._base import run_edited_reference

TAG = "fusion"

EDITS = (
    (
        'if getattr(op, "elementwise", False):',
        'if hasattr(op, "elementwise"):  # should read the value, not test that it exists',
    ),
)

run_edited_reference(globals(), EDITS)
