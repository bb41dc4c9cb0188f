"""Treats an op as elementwise when it merely has an elementwise attribute (hasattr), so matmul, softmax and attention are fused too."""

from reference.mutants._base import export, fresh_reference

TAG = "fusion"

ref = fresh_reference(__name__)


def fuse_elementwise(ops):
    fused, run = [], []

    def close_run():
        if len(run) >= 2:
            fused.append(ref._FusedElementwise(run))
        else:
            fused.extend(run)
        run.clear()

    for op in ops:
        if hasattr(op, "elementwise"):  # should read the attribute's value
            run.append(op)
        else:
            close_run()
            fused.append(op)
    close_run()
    return fused


ref.fuse_elementwise = fuse_elementwise

export(ref, globals())
