"""``launches``: how many launches a step cost (the lab's launch counter, read before and after it)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.spec_model import MaskValue
from grader.suite.checks.base import Check
from grader.suite.locating import bounded, decision_at, first_location, origin_at, site_lines
from grader.suite.schema_parts import COUNT, STEP_NAME, schema_object

from .fused_ops import fused_list_decided_at
from .runner_steps import (
    bumps_at,
    due_key,
    eager_run_at,
    earlier_key_at,
    given_arg,
    key_at,
    runner_build,
    step_kind,
)


@dataclass(frozen=True)
class LaunchesCheck(Check):
    step: int
    equals: int
    line: int = 0

    kind = "launches"
    order = 10
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's

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

    def raise_decided_at(self, j, index):
        # a call that raised on a path chosen by a key other than the one due: that key's making
        return key_at(j.obs[index], due_key(j.case, index)) if index == self.step else ""

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
            problem = f"should cost {self.equals} {plural} but cost {obs.launches}." + (
                _eager_ops_not_run(j.case, self.step, obs) or launch_reason(kind, self.equals, obs.launches)
            )
            at = bumps_at(obs)
            # a path chosen by a key that is not the one due, this call's or an earlier call's of its runner
            wrong_key = key_at(obs, due_key(j.case, self.step)) or earlier_key_at(j.case, j.obs, self.step)
            if kind == "replay" and obs.launches > self.equals and _built_as(j.case, self.step, "GraphRunner"):
                at = (wrong_key or _path_decided(obs)) + eager_run_at(obs) + at
            if obs.launches < self.equals:
                at = _uncounted_at(obs) + at
            if wrong_key and not at.startswith(wrong_key):
                at = wrong_key + at
            if kind == "eager":  # one launch per entry of a list a fusion of the submission's made wrong
                at = fused_list_decided_at(j.case, j.obs, self.step, obs.launches) + at
            if not first_location(at):  # no bump of the submission's own making: where the step's code went
                at = origin_at(obs) + at
        j.record(step, "launches during this step", str(self.equals), str(obs.launches), problem, at=at)


def _uncounted_at(obs) -> str:
    """A call that cost fewer launches: the first place an op ran, none of whose calling
    functions counted a launch during the step (an op called directly, where its launch is paid
    through run_eager or a replay's bump; a fused op's parts run inside an op run_eager counted);
    "" when every op ran under a function that counted one."""
    counting = set()
    for bump in obs.bumps:
        frames = obs.site(bump.site)
        if frames:
            counting.add((frames[0].file, frames[0].function))
    for call in obs.witness:
        frames = obs.site(call.site)  # not an op run inside another op a counting function ran (a fused op's parts)
        if frames and not any((f.file, f.function) in counting for f in frames):
            return bounded(
                "\n  an op ran here, from a function that counted no launch:" + site_lines(frames, "called at")
            )
    return ""


def _path_decided(obs) -> str:
    """A replay that cost more because it captured instead (it gave a graph record its shape):
    the test that chose that path, as a traced re-run notes it (grader.run.relocating). "" when
    it did not capture (a miscounted replay: its bumps are the cause; ops run through run_eager:
    that call is), or the call was not traced."""
    if not any(o.kind == "field:shape" for o in obs.origin):  # no record given its shape: not a capture
        return ""
    return decision_at(obs, "   (the path this call took instead of a replay)", lookups=True)


def _built_as(case, index: int, target: str) -> bool:
    """Whether the runner step ``index`` calls was built as ``target`` (a GraphRunner's replay is
    one launch: launches counted in run_eager mean it ran eagerly)."""
    build = runner_build(case, index)
    return build is not None and build.target == target


def launch_reason(kind: str, expected: int, observed: int) -> str:
    """One sentence on why the count matters, for the kind of step it is (the cause, never a rule
    about another kind of step)."""
    if kind == "eager":
        return " An eager run pays one launch per op in the list it is given" + (
            " (a fused list holds fewer ops)." if observed > expected else ": call LaunchCounter.bump(1) once per op."
        )
    if kind == "oversize":
        return " This batch is above every capture size: it has no graph and runs eagerly, one launch per op, on every call, and is never captured."
    if kind == "uncapturable":
        return " No op of this model is capturable, so there is nothing to capture: every call runs all its ops through run_eager, one launch per op."
    if kind == "warmup":
        return " This is a warm-up call of its key: it runs eagerly, one launch per op, and captures nothing."
    if kind == "replay" and expected == 1:
        return " A replay is one graph launch, however many ops it holds."
    if kind == "capture":
        return " Capture runs each op once, eagerly, to record it: one launch per op."
    if kind == "piecewise-capture":
        return " A first piecewise call runs every op once: each capturable segment is captured (one launch per op) and each other segment runs through run_eager (one launch per op)."
    if kind == "piecewise-replay":
        return " A piecewise replay costs one launch per capturable segment plus one per op of the segments that are not capturable."
    return ""


def _eager_ops_not_run(case, index: int, obs) -> str:
    """For a call of a PiecewiseGraphRunner built with a literal mask: the cause when ops that are
    not capturable never ran during the call (their segment was skipped), read from the op
    witness; empty otherwise."""
    build = runner_build(case, index)
    if build is None or build.target != "PiecewiseGraphRunner":
        return ""
    mask = given_arg(build, 1, "is_capturable")
    if not isinstance(mask, MaskValue):
        return ""
    lists = {w.list_id for w in obs.witness}
    ran = {w.position for w in obs.witness}
    missing = [i for i, capturable in enumerate(mask.mask) if not capturable and i not in ran]
    if len(lists) > 1 or not missing:
        return ""
    which = ", ".join(str(i) for i in missing)
    ops = f"The ops at positions {which} are" if len(missing) > 1 else f"The op at position {which} is"
    return (
        f" {ops} not capturable and never ran during this call: each segment that is not capturable"
        " runs through run_eager on every call, one launch per op."
    )
