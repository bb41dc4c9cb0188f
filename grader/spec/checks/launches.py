"""``launches``: how many launches a step cost (the lab's launch counter, read before and after it)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.spec.checks.base import Check
from grader.spec.describing import step_kind
from grader.spec.locating import bumps_at, call_at
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
        problem, at = None, ""
        if obs.launches != self.equals:
            kind = step_kind(j.case, self.step)
            problem = f"should cost {self.equals} {plural} but cost {obs.launches}." + launch_reason(
                kind, self.equals, obs.launches
            )
            at = bumps_at(obs)
            if (
                kind == "replay" and obs.launches > self.equals and obs.witness and _graph_runner(j.case, step.target)
            ):  # ran eagerly
                at = call_at(obs, obs.witness[0].site, "the ops ran one by one on this replay:") + at
        j.record(step, "launches during this step", str(self.equals), str(obs.launches), problem, at=at)


def _graph_runner(case, name: str) -> bool:
    """Whether ``name`` is a GraphRunner the case built (every op of its replay should be in the graph)."""
    return any(s.action == "build" and s.name == name and s.target == "GraphRunner" for s in case.steps)


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
