"""``fused_ops``: the list fuse_elementwise returned is the contract's fusion of the list it was given."""

from __future__ import annotations

from dataclasses import dataclass

from grader.suite.checks.base import Check
from grader.suite.describing import outcome
from grader.suite.schema_parts import STEP_NAME, schema_object

from ..ops import OP_KINDS


@dataclass(frozen=True)
class FusedOpsCheck(Check):
    """The list a ``fuse_elementwise`` call returned is the fusion of its op list: each maximal
    run of two or more elementwise ops is one new op marked elementwise, and every other op is
    the very op object it was given, in order."""

    step: int
    list_id: int
    elementwise: tuple[bool, ...]  # per op of the list given, in order
    line: int = 0

    kind = "fused_ops"
    order = 120
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's

    @classmethod
    def parse(cls, draft, body, at, line):
        fields = draft.reader.mapping(body, at, ("step",), ("step",))
        step = draft.step(fields["step"][1], f"{at}.step", ("call",))
        info = draft.bound.get(step.name)
        if step.target != "fuse_elementwise" or info is None or info.chain is None or info.list_id is None:
            raise draft.reader.fail(
                fields["step"][1],
                f"{at}.step",
                f"step {step.name!r} must be a call of fuse_elementwise on a literal op list",
            )
        return cls(step.key, info.list_id, tuple(OP_KINDS[op.name].elementwise for op in info.chain), line)

    @classmethod
    def schema(cls):
        return schema_object({"step": STEP_NAME}, ("step",))

    def judge(self, j):
        step, obs = j.case.steps[self.step], j.obs[self.step]
        groups: list[list[int]] = []  # the contract's fusion: maximal runs of elementwise ops
        for i, elementwise in enumerate(self.elementwise):
            if elementwise and groups and self.elementwise[groups[-1][-1]] and groups[-1][-1] == i - 1:
                groups[-1].append(i)
            else:
                groups.append([i])
        expected = " ".join(f"fused({', '.join(map(str, g))})" if len(g) > 1 else f"op {g[0]}" for g in groups)
        what = "the fused list: each run of elementwise ops is one new op marked elementwise; other ops are the very ops given"
        listed = obs.ops
        if listed is None:
            j.record(
                step,
                what,
                expected,
                outcome(obs) if obs.outcome != "returned" else "not a list",
                "fuse_elementwise should return a list of ops.",
            )
            return
        seen = " ".join(
            f"op {o.position}"
            if o.given and o.list_id == self.list_id
            else ("new op" + ("" if o.elementwise else " (not elementwise)"))
            for o in listed
        )
        problem = None
        if len(listed) != len(groups):
            problem = f"returned {len(listed)} ops, expected {len(groups)}: " + _count_cause(groups, len(listed))
        else:
            for group, got in zip(groups, listed):
                if len(group) == 1 and not (got.given and got.list_id == self.list_id and got.position == group[0]):
                    why = (
                        "a lone elementwise op is not wrapped"
                        if self.elementwise[group[0]]
                        else "an op that is not elementwise is never wrapped or replaced"
                    )
                    problem = f"op {group[0]} should be kept as the very op object it was given ({why})."
                    break
                if len(group) > 1 and (got.given or not got.elementwise):
                    problem = f"ops {group[0]} to {group[-1]} should become one new op marked elementwise = True (so that a later fusion pass can merge it again)."
                    break
        j.record(step, what, expected, seen, problem)


def _count_cause(groups: list[list[int]], returned: int) -> str:
    """Why the fused list has the wrong length, as far as its length tells."""
    if returned < len(groups):
        return "ops were merged that must stay apart: only adjacent ops marked elementwise fuse, and every other op stays as it is."
    in_pairs = sum((len(g) + 1) // 2 for g in groups)
    if returned == in_pairs:
        return "each maximal run of adjacent elementwise ops becomes one op, merged whole (a run of three is one op, not a pair and a single)."
    if returned == sum(len(g) for g in groups):
        return "nothing was fused: each run of two or more adjacent elementwise ops becomes one new op."
    return "each maximal run of adjacent elementwise ops becomes one op, and every other op stays as it is."
