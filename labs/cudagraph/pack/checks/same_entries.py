"""``same_entries``: later calls of a runner found their graphs in its table (Constraint 1).

A cache hit is told by what the cache itself holds, never by what the replay then costs or
returns (those are the single-launch-replay and static-buffer behaviours' claims): after each
listed call, ``runner.graphs`` holds the very GraphEntry objects it held after the first one.
An entry added means a second graph was captured for a shape already captured; an entry
replaced means the call captured again instead of looking its shape up.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.suite.checks.base import Check
from grader.suite.describing import outcome
from grader.suite.schema_parts import STEP_NAME, schema_object

from .static_buffer import calls_of


@dataclass(frozen=True)
class SameEntriesCheck(Check):
    """After every listed call, the runner's graphs hold exactly the entries (by identity) they
    held after the first listed call."""

    of: str
    steps: tuple[int, ...]
    line: int = 0

    kind = "same_entries"
    order = 85
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's
    step_fields = ("steps",)

    @classmethod
    def parse(cls, draft, body, at, line):
        reader = draft.reader
        fields = reader.mapping(body, at, ("of", "steps"), ("of", "steps"))
        of = reader.ident(fields["of"][1], f"{at}.of")
        runner = draft.bound.get(of)
        if runner is None or runner.cls != "GraphRunner":
            raise reader.fail(
                fields["of"][1],
                f"{at}.of",
                f"expected the name of a GraphRunner (a PiecewiseGraphRunner has no graphs table), got {of!r}",
            )
        members = calls_of(draft, fields, at, of)
        for member in members:
            member.observe_graphs = True
        return cls(of, tuple(m.key for m in members), line)

    @classmethod
    def schema(cls):
        return schema_object(
            {"of": STEP_NAME, "steps": {"type": "array", "items": STEP_NAME, "minItems": 2}}, ("of", "steps")
        )

    def judge(self, j):
        what = f"{self.of}.graphs holds the same GraphEntry objects as after the first call"
        first = None
        for index in self.steps:
            step, obs = j.case.steps[index], j.obs[index]
            if obs.outcome != "returned":
                j.record(
                    step,
                    what,
                    "the call returns",
                    outcome(obs),
                    "the call did not return, so the graph table could not be read after it.",
                )
                return
            entries = {g.entry_id for g in obs.graphs or ()}
            if first is None:
                first = entries
                continue
            if entries == first:
                j.record(step, what, f"{len(first)} entries, the same objects", "the same objects", None)
                continue
            added, kept = len(entries - first), len(entries & first)
            if kept < len(first) and added:
                observed, cause = (
                    "an entry replaced by a new one",
                    f"this call replaced the GraphEntry of a shape {self.of} had already captured: it captured "
                    "again instead of finding its graph. Constraint 1: look the shape up in self.graphs and "
                    "capture only when it is missing.",
                )
            elif added:
                observed, cause = (
                    f"{added} new entr{'y' if added == 1 else 'ies'}",
                    f"this call added a GraphEntry although {self.of} had already captured a graph for its "
                    "shape. Constraint 1: the whole input shape is the key, and a shape seen before reuses "
                    "its graph.",
                )
            else:
                observed, cause = (
                    f"{len(first) - kept} entr{'y' if len(first) - kept == 1 else 'ies'} gone",
                    f"this call dropped a GraphEntry from {self.of}.graphs: a runner keeps every graph it "
                    "captured, so that shapes taking turns never capture again.",
                )
            j.record(step, what, f"the {len(first)} entries held after the first call", observed, cause)
            return
