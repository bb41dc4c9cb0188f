"""``same_output``: several calls returned the same array (within the dtype's tolerance).

For results no oracle can compute from the spec alone, such as a runner built from
the list ``fuse_elementwise`` returned (its ops are the submission's own), compared
with an eager run of the original ops on the same input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.suite.checks.base import Check
from grader.suite.describing import compare_arrays, describe, outcome
from grader.suite.schema_parts import STEP_NAME, schema_object


@dataclass(frozen=True)
class SameOutputCheck(Check):
    """Every listed step returned an array equal to the one the first listed step returned."""

    steps: tuple[int, ...]
    line: int = 0

    kind = "same_output"
    order = 130
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's
    step_fields = ("steps",)

    @classmethod
    def parse(cls, draft, body, at, line):
        fields = draft.reader.mapping(body, at, ("steps",), ("steps",))
        listed = draft.reader.sequence(fields["steps"][1], f"{at}.steps", 2)
        members = [draft.step(node, f"{at}.steps[{j}]", ("call", "method")) for j, node in enumerate(listed)]
        for j, member in enumerate(members):
            if member in members[:j]:
                raise draft.reader.fail(listed[j], f"{at}.steps[{j}]", f"step {member.name!r} is listed twice")
        return cls(tuple(m.key for m in members), line)

    @classmethod
    def schema(cls):
        return schema_object({"steps": {"type": "array", "items": STEP_NAME, "minItems": 2}}, ("steps",))

    def judge(self, j):
        first, *others = self.steps
        reference = j.obs[first].value
        first_step = j.case.steps[first]
        if not isinstance(reference, np.ndarray):
            observed = describe(reference) if j.obs[first].outcome == "returned" else outcome(j.obs[first])
            j.record(
                first_step,
                "returns an array",
                "an array",
                observed,
                f"returned {observed}, so there is no array to compare the other steps with.",
            )
            return
        for index in others:
            step, value = j.case.steps[index], j.obs[index].value
            what = f"returns the same array as step {first + 1} ({first_step.label})"
            problem = compare_arrays(reference, value, str(reference.dtype))
            j.record(
                step,
                what,
                describe(reference),
                describe(value),
                None if problem is None else f"returned a different array than step {first + 1}: {problem}.",
            )
