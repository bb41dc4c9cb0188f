"""Fuses adjacent elementwise ops two at a time, so a run of three becomes a pair and a lone op."""

from reference.mutants._base import export, fresh_reference

TAG = "fusion"

ref = fresh_reference(__name__)


def fuse_elementwise(ops):
    ops = list(ops)
    fused, i = [], 0
    while i < len(ops):
        pair = ops[i : i + 2]
        if len(pair) == 2 and all(getattr(op, "elementwise", False) for op in pair):
            fused.append(ref._FusedElementwise(pair))
            i += 2
        else:
            fused.append(ops[i])
            i += 1
    return fused


ref.fuse_elementwise = fuse_elementwise

export(ref, globals())
