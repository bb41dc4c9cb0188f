"""``fused_ops``: the list fuse_elementwise returned is the contract's fusion of the list it was given."""

from __future__ import annotations

from dataclasses import dataclass

from grader.spec_model import Case, OpsValue, RefValue
from grader.suite.checks.base import Check
from grader.suite.describing import outcome
from grader.suite.locating import bounded, frame_text
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
        groups = contract_groups(self.elementwise)
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


def contract_groups(elementwise: tuple[bool, ...]) -> list[list[int]]:
    """The contract's fusion of a list whose ops are ``elementwise`` or not: its maximal runs of
    adjacent elementwise ops, each a group, every other op a group of its own."""
    groups: list[list[int]] = []
    for i, flag in enumerate(elementwise):
        if flag and groups and elementwise[groups[-1][-1]] and groups[-1][-1] == i - 1:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def first_misplaced(groups: list[list[int]], listed, list_id: int) -> int | None:
    """The first op (its position) a returned list holds where the contract does not put it: a
    lone op missing from the list as itself (wrapped or merged), or an op of a run of two or more
    kept as itself (its run split); None when every op is where the contract puts it."""
    kept = {o.position for o in listed if o.given and o.list_id == list_id}
    for group in groups:
        for position in group:
            if (len(group) == 1) != (position in kept):
                return position
    return None


def fused_list_decided_at(case: Case, obs, index: int, launches: int | None = None) -> str:
    """For a step run on the list an earlier ``fuse_elementwise`` call of the submission returned
    (``run_eager(fused, x)``): when that list is not the contract's fusion of the literal list it
    was given, the test that chose the path of the first op it misplaced, as that call's traced
    re-run notes it (``op:N``, grader.observe.origins); "" otherwise (the list is right, the
    call was not traced, or the step was handed no such list). ``launches``: the step's count,
    named only when it is one per entry of that list (the step was right for the list it got)."""
    given = case.steps[index].args[0] if case.steps[index].args else None
    if not isinstance(given, RefValue):
        return ""
    maker = next((s for s in reversed(case.steps[:index]) if s.name == given.name), None)
    chain = maker.args[0] if maker is not None and maker.args else None
    if maker is None or maker.action != "call" or maker.target != "fuse_elementwise" or not isinstance(chain, OpsValue):
        return ""
    made = obs[maker.index]
    if made.ops is None or (launches is not None and launches != len(made.ops)):
        return ""
    list_id = sum(
        isinstance(v, OpsValue) for s in case.steps[: maker.index] for v in (*s.args, *(v for _, v in s.kwargs))
    )
    groups = contract_groups(tuple(OP_KINDS[op.name].elementwise for op in chain.chain))
    position = first_misplaced(groups, made.ops, list_id)
    test = next((o.frame for o in made.origin if o.kind == f"op:{position}"), None) if position is not None else None
    if test is None:
        return ""
    return bounded(
        f"\n  decided at {frame_text(test)}   (op {position}'s path in step {maker.index + 1}, which made the list this step ran)"
    )
