"""Judge: a case's checks + the worker's observations -> a verdict a student can act on.

This is the *judging* half of grading and it runs only in the grader's own
process. It never sees a live object of the submission: observations are
plain data already validated by :mod:`grader.observations`. Expected values are
computed here, from the spec, by the lab's oracle (:mod:`grader.lab.vocabulary`). Each
check judges itself (:mod:`grader.suite.checks`); this module decides which checks
can be made at all (a step that did not run stops the checks that need it, and
one line says why) and assembles the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.arrays import build_array
from grader.judging.results import STEP_RUNS, CheckLine, LaunchPoint, StepLine
from grader.lab import active as active_lab
from grader.lab import op_vocabulary
from grader.observations import CaseObservation, StepObservation
from grader.spec_model import ArrayValue, Case, RefValue, Step, contract_names
from grader.step_kinds import step_kind
from grader.suite.case_draft import OracleCall
from grader.suite.describing import MAX_MESSAGE, cut, describe, outcome
from grader.suite.locating import first_frame, raised_at, raised_where

__all__ = ["CaseVerdict", "Oracle", "describe", "judge_case", "root_causes"]


@dataclass(frozen=True)
class CaseVerdict:
    status: str  # passed | failed | error
    message: str
    steps: tuple[StepLine, ...]
    checks: tuple[CheckLine, ...]
    launches: tuple[LaunchPoint, ...]
    line: int = 0  # the spec line of the check (or step) behind the first failure, 0 if none
    cause: str = ""  # what failed first: a check kind, or a step's own cause (STEP_CAUSES)
    origin: str = ""  # the student's file:line the first failure names, "" when it names none
    origin_function: str = ""  # the function at that line, "" when not known


# A step's own failure, by what it did (grader.spec_model.OWN_CAUSES; a check's failure is named
# by the check's kind).
STEP_CAUSES = {"raised": "raised", "missing": "missing", "not_reached": "not-run"}


def _refs(step: Step) -> list[str]:
    """The names of earlier steps' results that a step uses."""
    names = [v.name for v in step.args if isinstance(v, RefValue)] + [
        v.name for _, v in step.kwargs if isinstance(v, RefValue)
    ]
    contract = contract_names()
    if step_kind(step.action).target_may_be_bound and step.target not in contract + active_lab().buildable:
        names.append(step.target)
    if step.on and step.on not in contract:
        names.append(step.on)
    return names


def root_causes(case: Case, observations) -> dict[int, int]:
    """For each step that did not run, the earlier step whose failure stopped it (itself for a
    step that raised or could not start)."""
    producer = {s.name: s.index for s in case.steps if s.name}
    roots: dict[int, int] = {}
    for step, obs in zip(case.steps, observations):
        if obs.outcome == "not_reached":
            cause = next(
                (
                    producer[n]
                    for n in _refs(step)
                    if n in producer and producer[n] < step.index and producer[n] in roots
                ),
                step.index,
            )
            roots[step.index] = roots.get(cause, cause)
        elif obs.outcome in ("raised", "missing"):
            roots[step.index] = step.index
    return roots


# ------------------------------------------------------------------ the trusted oracle world
class Oracle:
    """Expected arrays of a case, computed from the spec alone (inputs rebuilt from seeds).

    The same for every submission: :meth:`of` makes it once per case and hands out the same
    one, its arrays read-only (a check that wrote to one would change the next submission's
    expectation; numpy refuses instead)."""

    @classmethod
    def of(cls, case: Case, oracles: tuple[OracleCall, ...]) -> Oracle:
        key = (id(case), id(oracles))
        held = _MADE.get(key)
        if held is not None and held[0] is case and held[1] is oracles:
            return held[2]
        oracle = cls(case, oracles)
        if len(_MADE) >= _MADE_LIMIT:  # many suites loaded in one process (tests, an audit)
            _MADE.clear()
        _MADE[key] = (case, oracles, oracle)  # holding both: their ids cannot be reused meanwhile
        return oracle

    def __init__(self, case: Case, oracles: tuple[OracleCall, ...]) -> None:
        self.by_step = {o.step: o for o in oracles}
        self.inputs: dict[int, np.ndarray] = {}
        self.outputs: dict[int, np.ndarray] = {}
        shadow: dict[str, np.ndarray] = {}
        for step in case.steps:
            call = self.by_step.get(step.index)
            if call is not None:
                x = self._resolve(call.input, shadow)
                if x is not None:
                    self.inputs[step.index] = x
                    self.outputs[step.index] = op_vocabulary().apply_chain(call.chain, x)
                    shadow[step.name] = self.outputs[step.index].copy()
            elif step_kind(step.action).fills_target and step.target in shadow:
                shadow[step.target][...] = step.args[0].value
        for array in (*self.inputs.values(), *self.outputs.values()):
            array.flags.writeable = False

    @staticmethod
    def _resolve(value, shadow: dict[str, np.ndarray]) -> np.ndarray | None:
        if isinstance(value, ArrayValue):
            return build_array(value)
        if isinstance(value, RefValue) and value.name in shadow:
            return shadow[value.name].copy()
        return None


_MADE: dict[tuple[int, int], tuple[Case, tuple[OracleCall, ...], Oracle]] = {}
_MADE_LIMIT = 4096


# ------------------------------------------------------------------ judging one case
class CaseJudge:
    """The judging of one case: the oracle, the lines recorded so far and the first failure."""

    def __init__(
        self, case: Case, oracles: tuple[OracleCall, ...], observation: CaseObservation, answers: object = None
    ) -> None:
        self.case = case
        self.answers = answers  # grader.judging.answers.Answers: the student's cited lines (the cites check)
        self.obs = observation.steps
        self.oracle = Oracle.of(case, oracles)
        self.lines: list[CheckLine] = []
        self.first_failure: str | None = None
        self.dead: set[int] = set()  # steps that did not run as the spec needs (see step_health)
        self.current_line = 0  # the spec line of the check being judged (0: a step's own health)
        self.current_cause = ""  # the kind of the check being judged, or a step's own cause
        self.current_check: int | None = None  # index in case.checks of the check being judged
        self.check_lines = 0  # lines the check being judged has recorded so far
        self.first_failure_line = 0
        self.first_failure_cause = ""
        self.first_failure_origin = ""
        self.first_failure_function = ""

    def record(
        self, step: Step | None, what: str, expected: str, observed: str, problem: str | None, at: str = ""
    ) -> None:
        """One line of the verdict; ``at``: the lines naming the submission's code behind a failure
        (:mod:`grader.suite.locating`), added below the message's cause."""
        file, line, function = first_frame(at) if problem is not None else ("", 0, "")
        located = f"{file}:{line}" if file else ""
        if self.current_check is None:
            line_id = f"step{step.index + 1}.runs" if step else "case.runs"
        else:
            line_id = f"{self.current_cause}#{self.current_check}"
            self.check_lines += 1
            if self.check_lines > 1:
                line_id += f".{self.check_lines}"
        self.lines.append(
            CheckLine(
                step=step.index if step else None,
                what=what,
                expected=expected,
                observed=observed,
                passed=problem is None,
                id=line_id,
                check=self.current_check,
                cause=self.current_cause,
                file=file,
                line=line,
                function=function,
            )
        )
        if problem is not None and self.first_failure is None:
            where = f"Step {step.index + 1} ({step.label})" if step else "This case"
            self.first_failure = cut(f"{where}: {problem}", MAX_MESSAGE) + (at if located else "")
            self.first_failure_line = self.current_line or (step.line if step else 0)
            self.first_failure_cause = self.current_cause
            self.first_failure_origin = located
            self.first_failure_function = first_frame(at)[2] if located else ""

    def step_health(self) -> None:
        """A step that raised, or could not run, fails the case unless a check expected it. The
        checks of the steps it stopped are not made: one line names the step and the cause."""
        expected_to_raise = {i for c in self.case.checks for i in c.may_raise()}
        roots = root_causes(self.case, self.obs)
        self.dead = {i for i, root in roots.items() if not (root == i and i in expected_to_raise)}
        for step, obs in zip(self.case.steps, self.obs):
            if step.index not in self.dead or (roots[step.index] != step.index and roots[step.index] in self.dead):
                continue
            stopped = sorted(i for i, root in roots.items() if root == step.index and i != step.index)
            n_checks = sum(1 for c in self.case.checks if set(c.looks_at()) & ({step.index} | set(stopped)))
            after = ""
            if stopped:
                which = f"step {stopped[0] + 1}" if len(stopped) == 1 else f"steps {_ranges(stopped)}"
                after = (
                    f" {which[0].upper()}{which[1:]} need{'s' if len(stopped) == 1 else ''} its result and did not run"
                )
                after += f", so {n_checks} check{'s' if n_checks != 1 else ''} could not be made." if n_checks else "."
            elif n_checks:
                after = f" {n_checks} check{'s' if n_checks != 1 else ''} of this step could not be made."
            self.current_cause = STEP_CAUSES.get(obs.outcome, "not-run")
            if obs.outcome == "raised" and obs.error is not None and obs.error.type == "NotImplementedError":
                self.current_cause = "not-written"
            if obs.outcome == "missing":
                cause = f"your {active_lab().module_file} does not define {obs.note}, which this case needs."
            elif obs.outcome == "raised" and obs.error is not None and obs.error.type == "NotImplementedError":
                cause = f"raised NotImplementedError: this part of your {active_lab().module_file} is not written yet."
            elif obs.outcome == "raised":
                cause = f"{outcome(obs)}."
            else:
                names = _refs(step)
                cause = f"could not run: {names[0] if names else 'a name it uses'} was not produced by an earlier step."
            claim = "runs" if obs.outcome != "raised" else "runs without an exception"
            if self.current_cause == "not-written":  # the part it calls: what to write (one part, one cause)
                claim = f"{step.target} is written (runs without NotImplementedError)"
            self.record(
                step,
                claim,
                STEP_RUNS,
                outcome(obs),
                cause + after,
                at=self.raise_decided_at(step.index) + raised_at(obs.error) if obs.outcome == "raised" else "",
            )

    def raise_decided_at(self, index: int) -> str:
        """A raise's decision, where a check of the raised step can tell it was wrong (a traced
        re-run's path chosen by a key other than the one due: :meth:`Check.raise_decided_at`); ""
        otherwise (a raise alone does not tell whether its path was the one due)."""
        for check in self.case.checks:
            if index in check.looks_at():
                found = check.raise_decided_at(self, index)
                if found:
                    return found
        return ""


def _step_outcome(case: Case, step: Step, obs: StepObservation) -> str:
    """What a step did, in words; a step that did not run names the step it waited for."""
    if obs.outcome == "raised":
        return outcome(obs) + raised_where(obs.error)
    if obs.outcome != "not_reached":
        return outcome(obs)
    producer = {s.name: s.index for s in case.steps[: step.index] if s.name}
    for name in _refs(step):
        if name in producer:
            return f"not run: needs {name}, which step {producer[name] + 1} did not produce"
    return outcome(obs)


def _ranges(indices: list[int]) -> str:
    """0-based step indices as students read them: ``2-4, 6``."""
    parts: list[str] = []
    start = prev = indices[0]
    for i in indices[1:] + [None]:  # type: ignore[list-item]
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(f"{start + 1}" if start == prev else f"{start + 1}–{prev + 1}")
        if i is not None:
            start = prev = i
    return ", ".join(parts)


def judge_case(
    case: Case, oracles: tuple[OracleCall, ...], observation: CaseObservation, answers: object = None
) -> CaseVerdict:
    """Turn one case's observations into a verdict; never raises on odd observations.
    ``answers``: the student's notebook answers (grader.judging.answers), for a ``cites`` check."""
    judge = CaseJudge(case, oracles, observation, answers)
    judge.step_health()
    for n, check in enumerate(case.checks):
        if set(check.looks_at()) & judge.dead:
            continue  # collapsed into the line that names the step that stopped it
        judge.current_line, judge.current_cause = check.line, check.kind
        judge.current_check, judge.check_lines = n, 0
        check.judge(judge)
    steps = tuple(
        StepLine(index=s.index, action=s.label, outcome=_step_outcome(case, s, o))
        for s, o in zip(case.steps, judge.obs)
    )
    launch_checks = dict(p for p in (c.expected_launches() for c in case.checks) if p is not None)
    launches = tuple(
        LaunchPoint(step=s.index, label=s.label, expected=launch_checks.get(s.index), observed=o.launches)
        for s, o in zip(case.steps, judge.obs)
        if step_kind(s.action).pictures_launches
        and not s.implicit
        and (s.index in launch_checks or o.launches)
        and s.index not in judge.dead
    )  # a step that did not run has no launches to picture: its line above says why
    status = "passed" if judge.first_failure is None else "failed"
    message = "All checks passed." if status == "passed" else judge.first_failure
    return CaseVerdict(
        status=status,
        message=message,
        steps=steps,
        checks=tuple(judge.lines),
        launches=launches,
        line=judge.first_failure_line,
        cause=judge.first_failure_cause,
        origin=judge.first_failure_origin,
        origin_function=judge.first_failure_function,
    )
