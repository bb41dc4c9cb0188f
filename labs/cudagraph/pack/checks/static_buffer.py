"""``static_buffer``: calls of one graph ran through the same static input buffer, holding each call's input."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.spec_model import ArrayValue
from grader.suite.case_draft import padded_shape
from grader.suite.checks.base import Check
from grader.suite.describing import describe, outcome
from grader.suite.locating import field_at
from grader.suite.schema_parts import STEP_NAME, schema_object


@dataclass(frozen=True)
class StaticBufferCheck(Check):
    """Every listed step ran through the same static_input object of the given shape,
    whose content (real rows) equals that step's input."""

    of: str
    steps: tuple[int, ...]
    buffer_shape: tuple[int, ...]
    line: int = 0
    num_ops: int | None = None  # the ops the runner was built with; the GraphEntry must say so

    kind = "static_buffer"
    order = 90
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's
    step_fields = ("steps",)

    @classmethod
    def parse(cls, draft, body, at, line):
        of, keys, shape = graph_calls(draft, body, at)
        return cls(of, keys, shape, line, draft.literal_op_count(of))

    @classmethod
    def schema(cls):
        return graph_calls_schema()

    def judge(self, j):
        first_identity = None
        for index in self.steps:
            step = j.case.steps[index]
            entry = graph_entry_after(j, index, self.buffer_shape, self.of)
            if entry is None:
                return
            identity = (entry.static_input_id, entry.static_input_address)
            if first_identity is None:
                first_identity = identity
            elif identity != first_identity:
                j.record(
                    step,
                    "same static_input object as at capture",
                    "the buffer made at capture",
                    "a different array",
                    "the input was copied into a new buffer. Constraint 2: a captured graph only ever reads the static input buffer it was captured with, so every replay must copy into that same array.",
                    at=field_at(j.obs[index], "static_input"),
                )
                return
            x = j.oracle.inputs.get(index)
            if x is not None and entry.static_input.dtype != x.dtype:
                j.record(
                    step,
                    "static_input has the input's dtype",
                    str(x.dtype),
                    str(entry.static_input.dtype),
                    f"the static input buffer is {entry.static_input.dtype} but the input is {x.dtype}: allocate the buffer with the input's dtype, or every replay computes in another precision than the caller asked for.",
                    at=field_at(j.obs[index], "static_input"),
                )
                return
            if x is not None:
                rows = entry.static_input[: x.shape[0]] if entry.static_input.ndim else entry.static_input
                ok = rows.shape == x.shape and np.array_equal(rows, x)
                j.record(
                    step,
                    "static_input holds this call's input",
                    describe(x),
                    describe(rows),
                    None
                    if ok
                    else "the static input buffer does not hold the input of this call: copy each new input into it before running the ops.",
                )
                if not ok:
                    return
            if not self._graph_entry_holds(j, step, entry, index):
                return
        j.record(
            None, "one static_input buffer across the calls", "same object every time", "same object every time", None
        )

    def _graph_entry_holds(self, j, step, entry, index: int) -> bool:
        """The GraphEntry itself, as the handout names it (``GraphEntry(shape, static_input,
        output, num_ops)``): its shape is the buffer's shape and num_ops the number of ops. What
        ``output`` holds after a replay is graphgrade's stricter reading: ``entry_output``."""
        shape = list(self.buffer_shape)
        got_shape = list(entry.shape) if entry.shape is not None else "not a tuple of integers"
        if entry.shape != self.buffer_shape:
            j.record(
                step,
                "GraphEntry.shape",
                str(shape),
                str(got_shape),
                f"the GraphEntry's shape is {got_shape}, not the shape {shape} the graph was captured for.",
                at=field_at(j.obs[index], "shape"),
            )
            return False
        if self.num_ops is not None and entry.num_ops != self.num_ops:
            j.record(
                step,
                "GraphEntry.num_ops",
                str(self.num_ops),
                str(entry.num_ops),
                f"the GraphEntry's num_ops is {entry.num_ops}, not the {self.num_ops} ops the graph holds.",
            )
            return False
        return True


def graph_calls_schema() -> dict:
    """The JSON Schema of ``{of, steps}`` (see :func:`graph_calls`)."""
    return schema_object(
        {"of": STEP_NAME, "steps": {"type": "array", "items": STEP_NAME, "minItems": 2}}, ("of", "steps")
    )


def graph_calls(draft, body, at) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """``{of, steps}``: a GraphRunner built from a literal op list and two or more named calls of
    it with literal array inputs, all landing in one buffer shape. Returns the runner's name, the
    calls' draft keys and that (padded) shape; the calls' graphs are observed."""
    reader = draft.reader
    fields = reader.mapping(body, at, ("of", "steps"), ("of", "steps"))
    of = reader.ident(fields["of"][1], f"{at}.of")
    runner = draft.bound.get(of)
    if runner is None or runner.cls != "GraphRunner" or runner.chain is None:
        raise reader.fail(
            fields["of"][1],
            f"{at}.of",
            f"expected the name of a GraphRunner built with a literal op list (a PiecewiseGraphRunner has no graphs table), got {of!r}",
        )
    members = calls_of(draft, fields, at, of)
    shapes = set()
    for j, member in enumerate(members):
        info = draft.bound.get(member.name)
        if member.target != of or info is None or not isinstance(info.input, ArrayValue):
            raise reader.fail(
                fields["steps"][1],
                f"{at}.steps[{j}]",
                f"step {member.name!r} must be a named call of {of!r} with a literal array input",
            )
        shapes.add(padded_shape(info.input.shape, runner.capture_sizes))
    if len(shapes) != 1:
        raise reader.fail(
            fields["steps"][1],
            f"{at}.steps",
            f"the steps' inputs land in different buffer shapes {sorted(shapes)}; list steps of one graph",
        )
    for member in members:
        member.observe_graphs = True
    return of, tuple(m.key for m in members), shapes.pop()


def calls_of(draft, fields, at: str, of: str) -> list:
    """The two or more steps a check's ``steps`` names, each a named call of runner ``of``."""
    members = [
        draft.step(n, f"{at}.steps[{j}]", ("call",))
        for j, n in enumerate(draft.reader.sequence(fields["steps"][1], f"{at}.steps", 2))
    ]
    for j, member in enumerate(members):
        if member.target != of:
            raise draft.reader.fail(
                fields["steps"][1], f"{at}.steps[{j}]", f"step {member.name!r} does not call {of!r}"
            )
    return members


def graph_entry_after(j, index: int, buffer_shape, of: str):
    """The GraphEntry of ``of.graphs`` whose static_input has ``buffer_shape`` after call ``index``;
    None (with the line recorded, naming the cause) when the call did not return or no entry has
    that shape."""
    step, obs = j.case.steps[index], j.obs[index]
    shape = list(buffer_shape)
    if obs.outcome != "returned":
        j.record(
            step,
            "static input buffer",
            f"a GraphEntry with static_input of shape {shape}",
            outcome(obs),
            "the call did not return, so its graph could not be inspected.",
        )
        return None
    entries = [g for g in (obs.graphs or ()) if g.static_input is not None and g.static_input.shape == buffer_shape]
    if not entries:
        x = j.oracle.inputs.get(index)
        unpadded = x is not None and x.shape != buffer_shape
        cause = (
            f" The buffer must have the padded shape: round the batch up to its capture size and key the graph by that shape, not by the input's {list(x.shape)}."
            if unpadded
            and any(g.static_input is not None and g.static_input.shape == x.shape for g in obs.graphs or ())
            else ""
        )
        j.record(
            step,
            "static input buffer",
            f"a GraphEntry with static_input of shape {shape}",
            f"{len(obs.graphs or ())} entries, none with that shape",
            f"after this call no GraphEntry in {of}.graphs holds a static_input array of shape {shape}.{cause}",
        )
        return None
    return entries[0]
