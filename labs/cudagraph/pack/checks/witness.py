"""``witness``: on replay, an op of the runner was handed the very buffer it was handed at capture."""

from __future__ import annotations

from dataclasses import dataclass

from grader.suite.checks.base import Check
from grader.suite.locating import argument_at, call_at
from grader.suite.schema_parts import COUNT, STEP_NAME, schema_object


def runner_with_literal_ops(draft, fields, at: str) -> str:
    """The ``of`` of a check on a runner's ops: a runner built from a literal op list."""
    of = draft.reader.ident(fields["of"][1], f"{at}.of")
    runner = draft.bound.get(of)
    if runner is None or runner.kind != "runner" or runner.list_id is None:
        raise draft.reader.fail(
            fields["of"][1], f"{at}.of", f"expected the name of a runner built with a literal op list, got {of!r}"
        )
    return of


def op_position(draft, fields, at: str, of: str) -> int:
    """The ``op`` a witness check watches (default 0), within the runner's list."""
    op = draft.reader.integer(fields["op"][1], f"{at}.op", 0) if "op" in fields else 0
    count = len(draft.bound[of].chain or ())
    if op >= count:
        raise draft.reader.fail(fields["op"][1], f"{at}.op", f"{of!r} has only {count} ops")
    return op


@dataclass(frozen=True)
class WitnessCheck(Check):
    """On the replay step, op ``op`` of the runner was handed the buffer it was handed at the capture
    step, and not the caller's array."""

    of: str
    list_id: int
    capture: int
    replay: int
    op: int = 0
    line: int = 0

    kind = "witness"
    order = 100
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's
    step_fields = ("capture", "replay")
    simulation_only = True

    @classmethod
    def parse(cls, draft, body, at, line):
        reader = draft.reader
        fields = reader.mapping(body, at, ("of", "capture", "replay", "op"), ("of", "capture", "replay"))
        of = runner_with_literal_ops(draft, fields, at)
        capture = draft.step(fields["capture"][1], f"{at}.capture", ("call",))
        replay = draft.step(fields["replay"][1], f"{at}.replay", ("call",))
        for node, step in ((fields["capture"][1], capture), (fields["replay"][1], replay)):
            if step.target != of:
                raise reader.fail(node, at, f"step {step.name!r} does not call {of!r}")
        op = op_position(draft, fields, at, of)
        capture.follow_values = replay.follow_values = True  # where op 0's input came from (its failure names it)
        if capture.position >= replay.position:
            raise reader.fail(fields["replay"][1], f"{at}.replay", "the replay step must come after the capture step")
        return cls(of, draft.bound[of].list_id, capture.key, replay.key, op, line)

    @classmethod
    def schema(cls):
        return schema_object(
            {"of": STEP_NAME, "capture": STEP_NAME, "replay": STEP_NAME, "op": COUNT}, ("of", "capture", "replay")
        )

    def judge(self, j):
        cap_step, rep_step = j.case.steps[self.capture], j.case.steps[self.replay]

        def first_call(index: int):
            return next((w for w in j.obs[index].witness if w.list_id == self.list_id and w.position == self.op), None)

        at_capture, at_replay = first_call(self.capture), first_call(self.replay)
        what = f"op {self.op} on replay is handed the buffer it was handed at capture"
        if at_capture is None:
            j.record(
                cap_step,
                what,
                f"op {self.op} runs during capture",
                "it was never called",
                f"op {self.op} was never called while capturing: capture must run the ops once on the static buffer.",
            )
            return
        if at_replay is None:
            # Nothing read any buffer: this check has no call to look at. A replay that does not
            # recompute is the replay's own failure (its cases check what it returns), not a
            # buffer read from the wrong place.
            j.record(rep_step, what, f"op {self.op} never handed the caller's array", "not called on replay", None)
            return
        if at_capture.address == j.obs[self.capture].input_address:
            j.record(
                cap_step,
                what,
                "the static input buffer",
                "the caller's own array",
                f"at capture op {self.op} was handed the caller's array instead of the new static input buffer. A graph is recorded on the buffer it will read on every replay: copy x into the static buffer, then run the ops on that buffer.",
                at=self._handed(j.obs[self.capture])
                + call_at(j.obs[self.capture], at_capture.site, f"op {self.op} was handed the caller's array:"),
            )
            return
        if at_replay.address == j.obs[self.replay].input_address:
            j.record(
                rep_step,
                what,
                "the static input buffer",
                "the caller's own array",
                "on replay the ops ran on the caller's array instead of the static input buffer. Constraint 2: a graph reads fixed addresses, so copy the new input into the buffer the graph was captured with and run the ops from it.",
                at=self._handed(j.obs[self.replay])
                + call_at(j.obs[self.replay], at_replay.site, f"op {self.op} was handed the caller's array:"),
            )
            return
        ok = at_replay.address == at_capture.address
        j.record(
            rep_step,
            what,
            "the buffer it was handed at capture",
            "that same buffer" if ok else "a different buffer",
            None
            if ok
            else "on replay the ops read a different buffer than at capture. Constraint 2: copy new inputs into the captured static buffer.",
            at=""
            if ok
            else call_at(j.obs[self.replay], at_replay.site, f"op {self.op} was handed a different buffer:"),
        )

    def _handed(self, obs) -> str:
        """Where op 0's wrong array came from (the origin outranks the call that used it)."""
        return argument_at(obs) if self.op == 0 else ""
