"""``value``: a step returned this plain value (a number, text, true/false, null, or a list of them)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.lab import active as active_lab
from grader.observations import EnumValue
from grader.step_kinds import changed_arguments
from grader.suite.checks.base import Check
from grader.suite.describing import describe, outcome
from grader.suite.locating import origin_at
from grader.suite.schema_parts import STEP_NAME, schema_object
from grader.suite.spec_reading import read_plain


@dataclass(frozen=True)
class ValueCheck(Check):
    """The step (often an implicit read) returned this plain value or enum member name."""

    step: int
    equals: object
    what: str
    enum: bool = False
    line: int = 0

    kind = "value"
    order = 30

    @classmethod
    def parse(cls, draft, body, at, line):
        fields = draft.reader.mapping(body, at, ("step", "equals"), ("step", "equals"))
        step = draft.step(fields["step"][1], f"{at}.step")
        return ValueCheck(
            step.key, read_plain(draft.reader, fields["equals"][1], f"{at}.equals"), "the value returned", False, line
        )

    @classmethod
    def schema(cls):
        return schema_object({"step": STEP_NAME, "equals": {"$ref": "#/$defs/plain"}}, ("step", "equals"))

    def judge(self, j):
        step, obs = j.case.steps[self.step], j.obs[self.step]
        value = obs.value
        if self.enum:
            enum = active_lab().step_mode_enum
            expected = f"{enum}.{self.equals}"
            ok = isinstance(value, EnumValue) and value.type == enum and value.name == self.equals
        else:
            expected = describe(as_tuple(self.equals))
            ok = same_plain(self.equals, value)
        observed = describe(value) if obs.outcome == "returned" else outcome(obs)
        j.record(
            step,
            self.what,
            expected,
            observed,
            None if ok else f"{self.what} should be {expected}, was {observed}.",
            at=""
            if ok or obs.outcome != "returned"
            else origin_at(
                obs, _calls_wrong(j, step), self.equals if self.enum else "", _decided(j, step), _arguments(j, step)
            ),
        )


def _decided(j, step):
    """The test that chose the path of the last call of the object this step reads, before it
    (noted only in a failed case's re-run, grader.run.relocating), or None."""
    if not step.on:
        return None
    for other in reversed(j.case.steps[: step.index]):
        if other.action == "call" and other.target == step.on:
            return next((o.frame for o in j.obs[other.index].origin if o.kind == "decided"), None)
    return None


def _arguments(j, step) -> dict[int, tuple[int, int]]:
    """Per positional parameter of the constructor the object this step reads was built with: the
    int argument the case gave it and the value the contract makes of it (the lab's ``at_least``:
    ``warmup_steps`` below 1 is raised to 1), where the two differ. Evidence for locating only."""
    build = next((s for s in j.case.steps[: step.index] if s.action == "build" and s.name == step.on), None)
    return changed_arguments(build) if build is not None and step.on else {}


def _calls_wrong(j, step) -> bool:
    """Whether a call of the object this step reads cost the wrong launches or returned a wrong
    result in this case (its state, not only this value, is wrong). Evidence for locating only:
    no check's verdict changes."""
    if not step.on:
        return False
    launches = dict(p for p in (c.expected_launches() for c in j.case.checks) if p is not None)
    for other in j.case.steps:
        if other.action == "call" and other.target == step.on and other.index in launches:
            if j.obs[other.index].outcome == "returned" and j.obs[other.index].launches != launches[other.index]:
                return True
        expected, obs = j.oracle.outputs.get(other.index), j.obs[other.index]
        if other.action != "call" or other.target != step.on or expected is None or obs.outcome != "returned":
            continue
        got = obs.value
        if not isinstance(got, np.ndarray) or got.shape != expected.shape:
            return True
        with np.errstate(all="ignore"):
            if not np.allclose(
                got.astype(np.float64), expected.astype(np.float64), rtol=1e-2, atol=1e-2, equal_nan=True
            ):
                return True
    return False


def as_tuple(value: object) -> object:
    return tuple(as_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value


def same_plain(expected: object, observed: object) -> bool:
    """Equality that does not let True pass for 1, or 2.0 for 2."""
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(observed, tuple)
            and len(observed) == len(expected)
            and all(same_plain(e, o) for e, o in zip(expected, observed))
        )
    if isinstance(expected, bool) or expected is None:
        return observed is expected
    if isinstance(expected, int):
        return isinstance(observed, int) and not isinstance(observed, bool) and observed == expected
    if isinstance(expected, float):
        return (
            isinstance(observed, (int, float))
            and not isinstance(observed, bool)
            and abs(observed - expected) <= 1e-9 * max(1.0, abs(expected))
        )
    return type(observed) is type(expected) and observed == expected
