"""``cites``: the line a student's answer cites does what the handout's question names (issue 33).

The slot's cited lines (:mod:`grader.judging.answers`, read by the grader as data) are compared with
the line traces of the case's probe steps (:mod:`grader.trace_facts`): a line is right when
it is right in any probe (the plain one, or the one with ``capture_sizes``), and every cited
line must be right for the slot to pass.

* ``constraint-2``: while the line ran during the replay (or a helper it called ran), the new
  input landed in the buffer the capture's first op read. A padded row's zero fill and a
  capture-time copy are not it.
* ``win``: the replay cost one launch, and it was counted while the line (or a helper it
  called) ran. The counter's own methods are not lines of the trace.
* ``constraint-1``: during the replay the line computed the cache key from the input's shape
  (or the padded batch size), fetched the entry by it, or is where a first and a second call
  of one shape part ways; or, during the capture, it stored the entry under the key. The
  line calling a helper that does it counts too.

A wrong citation says what the cited line did in the trace and which function the right line
is in; the right line itself only with ``reveal: true``.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader import trace_facts as tf
from grader.suite.answer_slots import Cited, cited_slots, where_to_write
from grader.suite.checks.base import Check
from grader.suite.schema_parts import STEP_NAME, schema_object

_KEY_FLAGS = tf.KEY | tf.KEY_VIA_CALL | tf.FETCH | tf.FETCH_VIA_CALL | tf.STORE | tf.STORE_VIA_CALL | tf.BRANCH
QUESTIONS = {
    "constraint-1": "the per-shape dispatch (Constraint 1)",
    "constraint-2": "the copy into the static buffer (Constraint 2)",
    "win": "the single launch of a replay (the win)",
}


def is_right(slot: str, line: tf.TracedLine, trace: tf.Trace) -> bool:
    if slot == "constraint-2":
        return line.has(tf.FILL | tf.FILL_VIA_CALL)
    if slot == "win":
        return trace.replay_launches == 1 and 1 in (line.replay_bumps, line.replay_bumps_via_call)
    return bool(line.flags & _KEY_FLAGS)


def _direct(slot: str, line: tf.TracedLine) -> bool:
    """Right by itself, not only as the caller of a helper that is."""
    if slot == "constraint-2":
        return line.has(tf.FILL)
    if slot == "win":
        return line.replay_bumps == 1
    return bool(line.flags & (tf.KEY | tf.FETCH | tf.STORE | tf.BRANCH))


def line_name(cited: Cited, module: str) -> str:
    """``line N``, and ``of FILE`` for a file other than the student's cudagraph.py."""
    return f"line {cited.line}" + ("" if cited.file in (module, "cudagraph.py") else f" of {cited.file}")


def describe_line(slot: str, cited: Cited, traces: list[tf.Trace], module: str = "cudagraph.py") -> str:
    """What a wrong cited line did in the probes, in words."""
    seen = [t.at(cited.file, cited.line) for t in traces]
    seen = [s for s in seen if s is not None]
    where = line_name(cited, module)
    if not seen:
        return f"{where} did not run while the grader captured and replayed a graph"
    capture = any(s.has(tf.RAN_CAPTURE) for s in seen)
    replay = any(s.has(tf.RAN_REPLAY) for s in seen)
    if slot == "win" and not replay and any(s.capture_bumps for s in seen):
        return f"{where} bumps the counter during capture, not replay"
    if not replay:
        return f"{where} runs only during capture" if capture else f"{where} did not run in the replay"
    if slot == "win":
        launches = next((t.replay_launches for t in traces if t.replay_launches is not None), None)
        counted = max(max(s.replay_bumps, s.replay_bumps_via_call) for s in seen)
        if launches is not None and launches != 1:
            return f"your replay cost {launches} launches, not one, so no line of it is the single launch"
        if counted > 1:
            return f"{where} bumps the counter {counted} times during the replay"
        return f"{where} runs during the replay but no launch is counted while it runs"
    if slot == "constraint-2":
        if not any(t.buffer for t in traces):
            return f"{where} runs during the replay, but the grader found no static buffer the captured ops read"
        return f"{where} runs during the replay, but the new input does not land in the captured static buffer there"
    return (
        f"{where} runs in both calls, but it neither computes the shape key, nor looks it up, stores or fetches by it"
    )


def _right_lines(slot: str, traces: list[tf.Trace]) -> list[tf.TracedLine]:
    found = [line for trace in traces for line in trace.lines if is_right(slot, line, trace)]
    return sorted(found, key=lambda line: not _direct(slot, line))


@dataclass(frozen=True)
class CitesCheck(Check):
    slot: str
    steps: tuple[int, ...]
    reveal: bool = False
    line: int = 0

    kind = "cites"
    order = 200
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's
    step_fields = ("steps",)
    simulation_only = True  # the probe's ops are the simulation's

    @classmethod
    def parse(cls, draft, body, at, line):
        reader = draft.reader
        fields = reader.mapping(body, at, ("slot", "steps", "reveal"), ("slot", "steps"))
        slot = reader.choice(fields["slot"][1], f"{at}.slot", cited_slots(), "answer slot")
        nodes = reader.sequence(fields["steps"][1], f"{at}.steps", 1)
        steps = tuple(draft.step(n, f"{at}.steps[{i}]", ("probe",)).key for i, n in enumerate(nodes))
        reveal = (
            reader.typed(fields["reveal"][1], f"{at}.reveal", (bool,), "true or false") if "reveal" in fields else False
        )
        return cls(slot, steps, reveal, line)

    @classmethod
    def schema(cls):
        return schema_object(
            {
                "slot": {"enum": list(cited_slots())},
                "steps": {"type": "array", "items": STEP_NAME, "minItems": 1},
                "reveal": {"type": "boolean", "description": "name the right line in the feedback"},
            },
            ("slot", "steps"),
        )

    def may_raise(self):
        return self.steps  # a probe that cannot run costs this slot, with its own message

    def judge(self, j):
        what = f"answer '{self.slot}:' cites {QUESTIONS[self.slot]}"
        answers = getattr(j, "answers", None)  # grader.judging.answers.Answers, read by the grader
        answer = answers.slot(self.slot) if answers is not None else None
        shown = (answer.text if answer is not None else "") or "no citation"
        obs = [j.obs[i] for i in self.steps]
        traces = [o.trace for o in obs if o.outcome == "returned" and o.trace is not None]
        if not traces:  # the code first: while it cannot run, no citation can be checked
            error = next((o.error for o in obs if o.error is not None), None)
            if error is not None and error.type == "NotImplementedError":
                why = "it raised NotImplementedError: this part of your cudagraph.py is not written yet"
            else:
                why = f"it raised {error.type}: {error.message[:120]}" if error else "it did not run"
            problem = (
                f"the grader could not capture and replay your GraphRunner ({why}), so this check could not be made"
            )
            j.record(None, what, "a traced line", shown, f"{problem}.")
            return
        if answer is None:
            j.record(None, what, "a cited line", "no answers read", f"no answers were read: {where_to_write()}.")
            return
        if answer.problem:
            j.record(None, what, "a cited line", shown, f"{answer.problem}.")
            return
        cited = ", ".join(f"{c.file}:{c.line}" for c in answer.cited)
        for c in answer.cited:
            source = (answers.files or {}).get(c.file)
            kind = source.kinds.get(c.line) if source is not None else None
            if kind is not None:
                j.record(
                    None,
                    what,
                    "a line that runs",
                    cited,
                    f"{line_name(c, answers.module)} is {kind}, never the answer.",
                )
                return
        for c in answer.cited:
            if not any(is_right(self.slot, line, t) for t in traces if (line := t.at(c.file, c.line)) is not None):
                right = _right_lines(self.slot, traces)
                hint = f" The right line is in {right[0].function}" if right else ""
                if right and self.reveal:
                    hint += f" ({right[0].file}:{right[0].line})"
                j.record(
                    None,
                    what,
                    "the line that does it",
                    cited,
                    f"{describe_line(self.slot, c, traces, answers.module)}.{hint + '.' if hint else ''}",
                )
                return
        j.record(None, what, "the line that does it", cited, None)
