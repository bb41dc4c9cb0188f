"""``padded_rows``: a padded call hands its ops a buffer whose rows beyond the real batch are all zero."""

from __future__ import annotations

from dataclasses import dataclass

from grader.spec_model import ArrayValue
from grader.suite.case_draft import padded_shape
from grader.suite.checks.base import Check
from grader.suite.locating import call_at
from grader.suite.schema_parts import COUNT, STEP_NAME, schema_object

from .witness import op_position


@dataclass(frozen=True)
class PaddedRowsCheck(Check):
    """On each listed step, op ``op`` of the runner was handed a buffer of the padded batch
    whose rows beyond the call's real batch are all zero (padding is zeroed on every call)."""

    of: str
    list_id: int
    steps: tuple[int, ...]
    padded_batch: int
    op: int = 0
    line: int = 0

    kind = "padded_rows"
    order = 110
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's
    step_fields = ("steps",)
    simulation_only = True

    @classmethod
    def parse(cls, draft, body, at, line):
        reader = draft.reader
        fields = reader.mapping(body, at, ("of", "steps", "op"), ("of", "steps"))
        of = reader.ident(fields["of"][1], f"{at}.of")
        runner = draft.bound.get(of)
        if runner is None or runner.kind != "runner" or runner.list_id is None or not runner.capture_sizes:
            raise reader.fail(
                fields["of"][1],
                f"{at}.of",
                f"expected the name of a runner built with a literal op list and capture_sizes, got {of!r}",
            )
        op = op_position(draft, fields, at, of)
        members = [
            draft.step(n, f"{at}.steps[{j}]", ("call",))
            for j, n in enumerate(reader.sequence(fields["steps"][1], f"{at}.steps", 1))
        ]
        batches = set()
        for j, member in enumerate(members):
            info = draft.bound.get(member.name)
            if member.target != of or info is None or not isinstance(info.input, ArrayValue) or not info.input.shape:
                raise reader.fail(
                    fields["steps"][1],
                    f"{at}.steps[{j}]",
                    f"step {member.name!r} must be a named call of {of!r} with a literal array input of at least one dimension",
                )
            padded = padded_shape(info.input.shape, runner.capture_sizes)
            if padded[0] <= info.input.shape[0]:
                raise reader.fail(
                    fields["steps"][1],
                    f"{at}.steps[{j}]",
                    f"the batch of step {member.name!r} fills its buffer (no padded rows to check); use a batch below a capture size",
                )
            batches.add(padded[0])
        if len(batches) != 1:
            raise reader.fail(
                fields["steps"][1],
                f"{at}.steps",
                f"the steps' inputs pad to different batches {sorted(batches)}; list steps of one graph",
            )
        return cls(of, runner.list_id, tuple(m.key for m in members), batches.pop(), op, line)

    @classmethod
    def schema(cls):
        return schema_object(
            {"of": STEP_NAME, "steps": {"type": "array", "items": STEP_NAME, "minItems": 1}, "op": COUNT},
            ("of", "steps"),
        )

    def judge(self, j):
        what = f"op {self.op} is handed the padded buffer, its rows beyond the real batch all zero"
        for index in self.steps:
            step, obs = j.case.steps[index], j.obs[index]
            x = j.oracle.inputs.get(index)
            call = next((w for w in obs.witness if w.list_id == self.list_id and w.position == self.op), None)
            if x is None or call is None:
                j.record(
                    step,
                    what,
                    f"op {self.op} runs on a buffer of {self.padded_batch} rows",
                    "it was never called",
                    f"op {self.op} was never called during this step, so the padded buffer could not be seen.",
                )
                return
            real = x.shape[0]
            pad = self.padded_batch - real
            if obs.input_address is not None and call.address == obs.input_address:
                j.record(
                    step,
                    what,
                    f"the padded static buffer of {self.padded_batch} rows",
                    "the caller's own array",
                    f"op {self.op} was handed the caller's own array, not the graph's static input buffer. Constraint 2: copy x into the padded static buffer (the real rows on top) and run the ops from that buffer.",
                    at=call_at(obs, call.site, f"op {self.op} was handed the caller's array:"),
                )
                return
            if not call.shape or call.shape[0] != self.padded_batch:
                got = call.shape[0] if call.shape else "no"
                j.record(
                    step,
                    what,
                    f"{self.padded_batch} rows",
                    f"{got} rows",
                    f"op {self.op} was handed {got} rows, not the {self.padded_batch} rows of the padded batch: pad the batch up to its capture size before running the graph.",
                    at=call_at(obs, call.site),
                )
                return
            ok = call.zero_rows >= pad
            observed = (
                f"the last {pad} rows all zero"
                if ok
                else (
                    "not known"
                    if call.zero_rows < 0
                    else f"{pad - min(call.zero_rows, pad)} of the last {pad} rows not zero"
                )
            )
            j.record(
                step,
                what,
                f"the last {pad} of {self.padded_batch} rows all zero",
                observed,
                None
                if ok
                else f"the {pad} padded rows beyond the real batch of {real} were not all zero when op {self.op} ran. Zero the padded rows on every call: a smaller batch after a larger one must not leave the larger batch's rows behind.",
                at="" if ok else call_at(obs, call.site),
            )
            if not ok:
                return
