"""``launches``: how many launches a step cost (the lab's launch counter, read before and after it)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.spec.checks.base import Check
from grader.spec.describing import step_kind
from grader.spec.schema_parts import COUNT, STEP_NAME, schema_object


@dataclass(frozen=True)
class LaunchesCheck(Check):
    step: int
    equals: int
    line: int = 0

    kind = "launches"
    order = 10

    @classmethod
    def parse(cls, draft, body, at, line):
        fields = draft.reader.mapping(body, at, ("step", "equals"), ("step", "equals"))
        step = draft.step(fields["step"][1], f"{at}.step")
        return cls(step.key, draft.reader.integer(fields["equals"][1], f"{at}.equals", minimum=0), line)

    @classmethod
    def schema(cls):
        return schema_object({"step": STEP_NAME, "equals": COUNT}, ("step", "equals"))

    def expected_launches(self):
        return (self.step, self.equals)

    def judge(self, j):
        step, obs = j.case.steps[self.step], j.obs[self.step]
        plural = "launch" if self.equals == 1 else "launches"
        if obs.launches is None:  # the step ran (a step that did not is collapsed before this)
            j.record(
                step,
                "launches",
                f"{self.equals} {plural}",
                "LaunchCounter.n was not an integer before or after this step",
                "LaunchCounter.n was not a readable integer (it must stay an int class attribute).",
            )
            return
        problem = None
        if obs.launches != self.equals:
            problem = f"should cost {self.equals} {plural} but cost {obs.launches}." + launch_reason(
                step_kind(j.case, self.step), self.equals, obs.launches
            )
        j.record(step, "launches during this step", str(self.equals), str(obs.launches), problem)


def launch_reason(kind: str, expected: int, observed: int) -> str:
    """One sentence on why the count matters, for the kind of step it is."""
    if kind == "eager":
        return " An eager run pays one launch per op in the list it is given" + (
            " (a fused list holds fewer ops)." if observed > expected else ": call LaunchCounter.bump(1) once per op."
        )
    if kind == "replay" and expected == 1:
        return " A replay is one graph launch, however many ops it holds."
    if kind == "capture":
        return " Capture runs each op once, eagerly, to record it: one launch per op."
    return ""
