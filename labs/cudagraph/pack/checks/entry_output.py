"""``entry_output``: after each listed call of a graph, its GraphEntry's ``output`` holds that call's
result (graphgrade's stricter reading: the handout stores ``output`` at capture and says nothing of
it on replay)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.suite.checks.base import Check
from grader.suite.describing import compare_arrays, describe

from .static_buffer import graph_calls, graph_calls_schema, graph_entry_after


@dataclass(frozen=True)
class EntryOutputCheck(Check):
    """After every listed call, the GraphEntry of the calls' buffer shape holds that call's result
    in ``output`` (its real rows, when padded)."""

    of: str
    steps: tuple[int, ...]
    buffer_shape: tuple[int, ...]
    line: int = 0

    kind = "entry_output"
    order = 95
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's
    step_fields = ("steps",)

    @classmethod
    def parse(cls, draft, body, at, line):
        of, keys, shape = graph_calls(draft, body, at)
        return cls(of, keys, shape, line)

    @classmethod
    def schema(cls):
        return graph_calls_schema()

    def judge(self, j):
        for index in self.steps:
            step = j.case.steps[index]
            entry = graph_entry_after(j, index, self.buffer_shape, self.of)
            if entry is None:
                return
            # What the call returned: this check's claim is that the entry stores it, whatever it
            # is (whether it is right is the output checks' claim, in the replay's own cases).
            returned = j.obs[index].value
            expected = returned if isinstance(returned, np.ndarray) else j.oracle.outputs.get(index)
            if expected is None:
                continue
            out = entry.output
            rows = out[: expected.shape[0]] if isinstance(out, np.ndarray) and out.ndim and expected.ndim else out
            problem = compare_arrays(expected, rows, str(expected.dtype))
            j.record(
                step,
                "GraphEntry.output holds this call's result",
                describe(expected),
                describe(rows),
                None
                if problem is None
                else f"the GraphEntry's output does not hold this call's result ({problem}): store the result of every capture and replay in entry.output, so the entry always holds its graph's latest output.",
            )
            if problem is not None:
                return
