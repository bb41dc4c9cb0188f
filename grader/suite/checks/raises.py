"""``raises``: a step raised (an exception of a given class name, or any)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.suite.checks.base import Check
from grader.suite.describing import outcome
from grader.suite.schema_parts import STEP_NAME, schema_object

EXCEPTION_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


@dataclass(frozen=True)
class RaisesCheck(Check):
    step: int
    type: str | None = None  # any exception when None
    line: int = 0

    kind = "raises"
    order = 40

    @classmethod
    def parse(cls, draft, body, at, line):
        fields = draft.reader.mapping(body, at, ("step", "type"), ("step",))
        step = draft.step(fields["step"][1], f"{at}.step")
        name = (
            draft.reader.typed(fields["type"][1], f"{at}.type", (str,), "an exception class name")
            if "type" in fields
            else None
        )
        if name is not None and not set(name) <= EXCEPTION_NAME_CHARS:
            raise draft.reader.fail(fields["type"][1], f"{at}.type", f"expected an exception class name, got {name!r}")
        return cls(step.key, name, line)

    @classmethod
    def schema(cls):
        return schema_object({"step": STEP_NAME, "type": {"type": "string"}}, ("step",))

    def may_raise(self):
        return (self.step,)

    def judge(self, j):
        step, obs = j.case.steps[self.step], j.obs[self.step]
        expected = self.type or "an exception"
        ok = obs.outcome == "raised" and obs.error is not None and (self.type is None or obs.error.type == self.type)
        j.record(
            step, "raises", expected, outcome(obs), None if ok else f"should raise {expected}, but {outcome(obs)}."
        )
