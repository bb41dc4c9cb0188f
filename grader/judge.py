"""Judge: a case's checks + the worker's observations -> a verdict a student can act on.

This is the *judging* half of grading and it runs only in the grader's own
process. It never sees a live object of the submission: observations are
plain data already validated by :mod:`grader.protocol`. Expected values are
computed here, from the spec, by the numpy oracle in :mod:`grader.ops`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.loader import OracleCall
from grader.ops import apply_chain, build_array
from grader.protocol import CaseObservation, EnumValue, OpaqueValue, StepObservation
from grader.results import CheckLine, LaunchPoint, StepLine
from grader.spec_model import (
    CONTRACT_NAMES,
    ArrayValue,
    Case,
    LaunchesCheck,
    OutputCheck,
    RaisesCheck,
    RefValue,
    StaticBufferCheck,
    Step,
    ValueCheck,
    WitnessCheck,
    PaddedRowsCheck,
    FusedOpsCheck,
)

TOLERANCE = {"float32": (1e-5, 1e-6), "float64": (1e-9, 1e-12)}
# Bounds on what a verdict says about a value: a submission chooses what it returns, and a
# report (or a grader's memory) must not grow with it.
MAX_DESCRIBED = 200  # characters per described value
MAX_ITEMS = 8  # items shown of a list or tuple
MAX_MESSAGE = 500  # characters of a case's message


@dataclass(frozen=True)
class CaseVerdict:
    status: str  # passed | failed | error
    message: str
    steps: tuple[StepLine, ...]
    checks: tuple[CheckLine, ...]
    launches: tuple[LaunchPoint, ...]
    line: int = 0  # the spec line of the check (or step) behind the first failure, 0 if none


# ------------------------------------------------------------------ describing values
def describe(value: object) -> str:
    """A short, readable rendering of an observed or expected value (at most MAX_DESCRIBED characters)."""
    return _cut(_render(value), MAX_DESCRIBED)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _render(value: object) -> str:
    if isinstance(value, np.ndarray):
        dims = ", ".join(str(d) for d in value.shape)
        flat = value.ravel()
        head = ", ".join(_num(v) for v in flat[:4])
        more = ", …" if flat.size > 4 else ""
        return f"{value.dtype}[{dims}] = [{head}{more}]"
    if isinstance(value, EnumValue):
        return f"{value.type}.{value.name}"
    if isinstance(value, OpaqueValue):
        article = "an" if value.type[:1].lower() in "aeiou" else "a"
        return f"{article} {value.type} object"
    if isinstance(value, tuple):
        items = [describe(v) for v in value[:MAX_ITEMS]] + (["…"] if len(value) > MAX_ITEMS else [])
        return "[" + ", ".join(items) + "]"
    if isinstance(value, str) and len(value) > MAX_DESCRIBED:
        return repr(value[:MAX_DESCRIBED]) + "…"
    return repr(value)


def _num(v: object) -> str:
    return f"{float(v):.4g}" if isinstance(v, (float, np.floating)) else str(v)


def _outcome(obs: StepObservation) -> str:
    if obs.outcome == "raised" and obs.error:
        return f"raised {obs.error.type}: {obs.error.message}" if obs.error.message else f"raised {obs.error.type}"
    if obs.outcome == "missing":
        return f"could not run: your cudagraph.py does not define {obs.note}"
    if obs.outcome == "not_reached":
        return "not run: an earlier step did not produce what it needs"
    return "returned " + describe(obs.value) if obs.value is not None else "returned None"


# ------------------------------------------------------------------ what a step is
def step_kind(case: Case, index: int) -> str:
    """``eager``, ``capture``, ``replay``, ``call`` or ``other``: what a step does, read from the
    trusted steps, so that every message speaks of the right thing (an eager run is not a replay).

    A call of a built runner with an input of a shape not seen before on that runner captures;
    with a shape seen before it replays (padding may make a new shape replay, so a capture is only
    claimed for the first call)."""
    step = case.steps[index]
    if step.action == "call" and step.target == "run_eager":
        return "eager"
    if step.action != "call" or step.target in CONTRACT_NAMES:
        return "other"
    earlier = [s for s in case.steps[:index] if s.action == "call" and s.target == step.target]
    return "replay" if earlier else "capture"


def _refs(step: Step) -> list[str]:
    """The names of earlier steps' results that a step uses."""
    names = [v.name for v in step.args if isinstance(v, RefValue)] + [v.name for _, v in step.kwargs if isinstance(v, RefValue)]
    if step.action in ("build", "call", "mutate") and step.target not in CONTRACT_NAMES:
        names.append(step.target)
    if step.on and step.on not in CONTRACT_NAMES:
        names.append(step.on)
    return names


def root_causes(case: Case, observations) -> dict[int, int]:
    """For each step that did not run, the earlier step whose failure stopped it (itself for a
    step that raised or could not start)."""
    producer = {s.name: s.index for s in case.steps if s.name}
    roots: dict[int, int] = {}
    for step, obs in zip(case.steps, observations):
        if obs.outcome == "not_reached":
            cause = next((producer[n] for n in _refs(step) if n in producer and producer[n] < step.index and producer[n] in roots), step.index)
            roots[step.index] = roots.get(cause, cause)
        elif obs.outcome in ("raised", "missing"):
            roots[step.index] = step.index
    return roots


# ------------------------------------------------------------------ the trusted oracle world
class Oracle:
    """Expected arrays of a case, computed from the spec alone (inputs rebuilt from seeds)."""

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
                    self.outputs[step.index] = apply_chain(call.chain, x)
                    shadow[step.name] = self.outputs[step.index].copy()
            elif step.action == "mutate" and step.target in shadow:
                shadow[step.target][...] = step.args[0].value

    @staticmethod
    def _resolve(value, shadow: dict[str, np.ndarray]) -> np.ndarray | None:
        if isinstance(value, ArrayValue):
            return build_array(value)
        if isinstance(value, RefValue) and value.name in shadow:
            return shadow[value.name].copy()
        return None


# ------------------------------------------------------------------ one check each
def _line(step: Step | None, what: str, expected: str, observed: str, passed: bool) -> CheckLine:
    return CheckLine(step=step.index if step else None, what=what, expected=expected, observed=observed, passed=passed)


def _compare_arrays(expected: np.ndarray, observed: object, tolerance_dtype: str) -> str | None:
    """None when equal within tolerance, else a sentence saying where they differ."""
    if not isinstance(observed, np.ndarray):
        return f"expected an array, got {describe(observed)}"
    if observed.shape != expected.shape:
        return f"shape {list(observed.shape)} instead of {list(expected.shape)}"
    rtol, atol = TOLERANCE.get(tolerance_dtype, TOLERANCE["float32"])
    if observed.dtype.kind not in "fiub":
        return f"dtype {observed.dtype} is not numeric"
    obs = observed.astype(np.float64)
    exp = expected.astype(np.float64)
    close = np.isclose(obs, exp, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    bad = tuple(int(i) for i in np.argwhere(~close)[0])
    return f"at index {list(bad)} the value is {_num(obs[bad])} but should be {_num(exp[bad])} ({int((~close).sum())} of {close.size} values differ)"


class _Judge:
    def __init__(self, case: Case, oracles: tuple[OracleCall, ...], observation: CaseObservation) -> None:
        self.case = case
        self.obs = observation.steps
        self.oracle = Oracle(case, oracles)
        self.lines: list[CheckLine] = []
        self.first_failure: str | None = None
        self.dead: set[int] = set()  # steps that did not run as the spec needs (see step_health)
        self.current_line = 0  # the spec line of the check being judged (0: a step's own health)
        self.first_failure_line = 0

    def record(self, step: Step | None, what: str, expected: str, observed: str, problem: str | None) -> None:
        self.lines.append(_line(step, what, expected, observed, problem is None))
        if problem is not None and self.first_failure is None:
            where = f"Step {step.index + 1} ({step.label})" if step else "This case"
            self.first_failure = _cut(f"{where}: {problem}", MAX_MESSAGE)
            self.first_failure_line = self.current_line or (step.line if step else 0)

    def launches(self, check: LaunchesCheck) -> None:
        step, obs = self.case.steps[check.step], self.obs[check.step]
        plural = "launch" if check.equals == 1 else "launches"
        if obs.launches is None:  # the step ran (a step that did not is collapsed before this)
            self.record(step, "launches", f"{check.equals} {plural}", "LaunchCounter.n was not an integer before or after this step", "LaunchCounter.n was not a readable integer (it must stay an int class attribute).")
            return
        problem = None
        if obs.launches != check.equals:
            problem = f"should cost {check.equals} {plural} but cost {obs.launches}." + _launch_reason(step_kind(self.case, check.step), check.equals, obs.launches)
        self.record(step, "launches during this step", str(check.equals), str(obs.launches), problem)

    def output(self, check: OutputCheck) -> None:
        step, obs = self.case.steps[check.step], self.obs[check.step]
        value = obs.value
        if check.shape is not None:
            got = list(value.shape) if isinstance(value, np.ndarray) else describe(value)
            self.record(step, "output shape", str(list(check.shape)), str(got), None if isinstance(value, np.ndarray) and value.shape == check.shape else f"returned shape {got}, expected {list(check.shape)}.")
        if check.dtype is not None:
            got = str(value.dtype) if isinstance(value, np.ndarray) else describe(value)
            self.record(step, "output dtype", check.dtype, got, None if got == check.dtype else f"returned dtype {got}, expected {check.dtype}.")
        comparisons = []  # both, when a check gives oracle: true and equals
        if check.oracle is not None:
            expected = self.oracle.outputs.get(check.step)
            what = "output equals the op chain " + "[" + ", ".join(op.label for op in check.oracle) + "] applied to the input"
            if expected is None:  # never pass a check that compared nothing
                self.record(step, what, "a value the oracle can compute", describe(value), "the grader could not compute this step's expected output (a spec error: run graphgrade validate).")
                return
            comparisons.append((expected, what))
        if check.equals is not None:
            comparisons.append((build_array(check.equals), "output equals the given values"))
        for expected, what in comparisons:
            problem = _compare_arrays(expected, value, str(expected.dtype))
            self.record(step, what, describe(expected), describe(value), None if problem is None else f"wrong output: {problem}.")

    def value(self, check: ValueCheck) -> None:
        step, obs = self.case.steps[check.step], self.obs[check.step]
        value = obs.value
        if check.enum:
            expected = f"StepMode.{check.equals}"
            ok = isinstance(value, EnumValue) and value.type == "StepMode" and value.name == check.equals
        else:
            expected = describe(_as_tuple(check.equals))
            ok = _same_plain(check.equals, value)
        observed = describe(value) if obs.outcome == "returned" else _outcome(obs)
        self.record(step, check.what, expected, observed, None if ok else f"{check.what} should be {expected}, was {observed}.")

    def raises(self, check: RaisesCheck) -> None:
        step, obs = self.case.steps[check.step], self.obs[check.step]
        expected = check.type or "an exception"
        ok = obs.outcome == "raised" and obs.error is not None and (check.type is None or obs.error.type == check.type)
        self.record(step, "raises", expected, _outcome(obs), None if ok else f"should raise {expected}, but {_outcome(obs)}.")

    def static_buffer(self, check: StaticBufferCheck) -> None:
        first_identity = None
        shape = list(check.buffer_shape)
        for index in check.steps:
            step, obs = self.case.steps[index], self.obs[index]
            if obs.outcome != "returned":
                self.record(step, "static input buffer", f"a GraphEntry with static_input of shape {shape}", _outcome(obs), "the call did not return, so its graph could not be inspected.")
                return
            entries = [g for g in (obs.graphs or ()) if g.static_input is not None and g.static_input.shape == check.buffer_shape]
            if not entries:
                self.record(step, "static input buffer", f"a GraphEntry with static_input of shape {shape}", f"{len(obs.graphs or ())} entries, none with that shape", f"after this call no GraphEntry in {check.of}.graphs holds a static_input array of shape {shape}.")
                return
            entry = entries[0]
            identity = (entry.static_input_id, entry.static_input_address)
            if first_identity is None:
                first_identity = identity
            elif identity != first_identity:
                self.record(step, "same static_input object as at capture", "the buffer made at capture", "a different array", "the input was copied into a new buffer. Constraint 2: a captured graph only ever reads the static input buffer it was captured with, so every replay must copy into that same array.")
                return
            x = self.oracle.inputs.get(index)
            if x is not None and entry.static_input.dtype != x.dtype:
                self.record(step, "static_input has the input's dtype", str(x.dtype), str(entry.static_input.dtype), f"the static input buffer is {entry.static_input.dtype} but the input is {x.dtype}: allocate the buffer with the input's dtype, or every replay computes in another precision than the caller asked for.")
                return
            if x is not None:
                rows = entry.static_input[: x.shape[0]] if entry.static_input.ndim else entry.static_input
                ok = rows.shape == x.shape and np.array_equal(rows, x)
                self.record(step, "static_input holds this call's input", describe(x), describe(rows), None if ok else "the static input buffer does not hold the input of this call: copy each new input into it before running the ops.")
                if not ok:
                    return
            if not self._graph_entry_record(step, entry, check, index):
                return
        self.record(None, "one static_input buffer across the calls", "same object every time", "same object every time", None)

    def _graph_entry_record(self, step: Step, entry, check: StaticBufferCheck, index: int) -> bool:
        """The GraphEntry itself: its shape is the buffer's shape, num_ops the number of ops, and
        output holds the result of this very call (its real rows, when padded)."""
        shape = list(check.buffer_shape)
        got_shape = list(entry.shape) if entry.shape is not None else "not a tuple of integers"
        if entry.shape != check.buffer_shape:
            self.record(step, "GraphEntry.shape", str(shape), str(got_shape), f"the GraphEntry's shape is {got_shape}, not the shape {shape} the graph was captured for.")
            return False
        if check.num_ops is not None and entry.num_ops != check.num_ops:
            self.record(step, "GraphEntry.num_ops", str(check.num_ops), str(entry.num_ops), f"the GraphEntry's num_ops is {entry.num_ops}, not the {check.num_ops} ops the graph holds.")
            return False
        expected = self.oracle.outputs.get(index)
        if expected is not None:
            out = entry.output
            rows = out[: expected.shape[0]] if isinstance(out, np.ndarray) and out.ndim and expected.ndim else out
            problem = _compare_arrays(expected, rows, str(expected.dtype))
            self.record(step, "GraphEntry.output holds this call's result", describe(expected), describe(rows), None if problem is None else f"the GraphEntry's output does not hold this call's result ({problem}): store the result of every capture and replay in entry.output.")
            if problem is not None:
                return False
        return True

    def witness(self, check: WitnessCheck) -> None:
        cap_step, rep_step = self.case.steps[check.capture], self.case.steps[check.replay]

        def first_call(index: int):
            return next((w for w in self.obs[index].witness if w.list_id == check.list_id and w.position == check.op), None)

        at_capture, at_replay = first_call(check.capture), first_call(check.replay)
        what = f"op {check.op} on replay is handed the buffer it was handed at capture"
        if at_capture is None:
            self.record(cap_step, what, f"op {check.op} runs during capture", "it was never called", f"op {check.op} was never called while capturing: capture must run the ops once on the static buffer.")
            return
        if at_replay is None:
            self.record(rep_step, what, f"op {check.op} runs during replay", "it was never called", f"op {check.op} was never called on replay: a replay recomputes the ops from the static buffer (returning a stored output gives stale results).")
            return
        if at_replay.address == self.obs[check.replay].input_address or at_capture.address == self.obs[check.capture].input_address:
            self.record(rep_step, what, "the static input buffer", "the caller's own array", "the ops ran on the caller's array instead of the static input buffer. Constraint 2: a graph reads fixed addresses, so new inputs must be copied into the buffer the graph was captured with.")
            return
        ok = at_replay.address == at_capture.address
        self.record(rep_step, what, "the buffer it was handed at capture", "that same buffer" if ok else "a different buffer", None if ok else "on replay the ops read a different buffer than at capture. Constraint 2: copy new inputs into the captured static buffer.")

    def fused_ops(self, check: FusedOpsCheck) -> None:
        step, obs = self.case.steps[check.step], self.obs[check.step]
        groups: list[list[int]] = []  # the contract's fusion: maximal runs of elementwise ops
        for i, elementwise in enumerate(check.elementwise):
            if elementwise and groups and check.elementwise[groups[-1][-1]] and groups[-1][-1] == i - 1:
                groups[-1].append(i)
            else:
                groups.append([i])
        expected = " ".join(f"fused({', '.join(map(str, g))})" if len(g) > 1 else f"op {g[0]}" for g in groups)
        what = "the fused list: each run of elementwise ops is one new op marked elementwise; other ops are the very ops given"
        listed = obs.ops
        if listed is None:
            self.record(step, what, expected, _outcome(obs) if obs.outcome != "returned" else "not a list", "fuse_elementwise should return a list of ops.")
            return
        seen = " ".join(f"op {o.position}" if o.given and o.list_id == check.list_id else ("new op" + ("" if o.elementwise else " (not elementwise)")) for o in listed)
        problem = None
        if len(listed) != len(groups):
            problem = f"returned {len(listed)} ops, expected {len(groups)}: each maximal run of adjacent elementwise ops becomes one op (a run of three is one op, not a pair and a single)."
        else:
            for group, got in zip(groups, listed):
                if len(group) == 1 and not (got.given and got.list_id == check.list_id and got.position == group[0]):
                    problem = f"op {group[0]} should be kept as the very op object it was given (a lone elementwise op is not wrapped)."
                    break
                if len(group) > 1 and (got.given or not got.elementwise):
                    problem = f"ops {group[0]} to {group[-1]} should become one new op marked elementwise = True (so that a later fusion pass can merge it again)."
                    break
        self.record(step, what, expected, seen, problem)

    def padded_rows(self, check: PaddedRowsCheck) -> None:
        what = f"op {check.op} is handed the padded buffer, its rows beyond the real batch all zero"
        for index in check.steps:
            step, obs = self.case.steps[index], self.obs[index]
            x = self.oracle.inputs.get(index)
            call = next((w for w in obs.witness if w.list_id == check.list_id and w.position == check.op), None)
            if x is None or call is None:
                self.record(step, what, f"op {check.op} runs on a buffer of {check.padded_batch} rows", "it was never called", f"op {check.op} was never called during this step, so the padded buffer could not be seen.")
                return
            real = x.shape[0]
            pad = check.padded_batch - real
            if not call.shape or call.shape[0] != check.padded_batch:
                got = call.shape[0] if call.shape else "no"
                self.record(step, what, f"{check.padded_batch} rows", f"{got} rows", f"op {check.op} was handed {got} rows, not the {check.padded_batch} rows of the padded batch: pad the batch up to its capture size before running the graph.")
                return
            ok = call.zero_rows >= pad
            observed = f"the last {pad} rows all zero" if ok else ("not known" if call.zero_rows < 0 else f"{pad - min(call.zero_rows, pad)} of the last {pad} rows not zero")
            self.record(
                step,
                what,
                f"the last {pad} of {check.padded_batch} rows all zero",
                observed,
                None if ok else f"the {pad} padded rows beyond the real batch of {real} were not all zero when op {check.op} ran. Zero the padded rows on every call: a smaller batch after a larger one must not leave the larger batch's rows behind.",
            )
            if not ok:
                return

    def step_health(self) -> None:
        """A step that raised, or could not run, fails the case unless a check expected it. The
        checks of the steps it stopped are not made: one line names the step and the cause."""
        expected_to_raise = {c.step for c in self.case.checks if isinstance(c, RaisesCheck)}
        roots = root_causes(self.case, self.obs)
        self.dead = {i for i, root in roots.items() if not (root == i and i in expected_to_raise)}
        for step, obs in zip(self.case.steps, self.obs):
            if step.index not in self.dead or (roots[step.index] != step.index and roots[step.index] in self.dead):
                continue
            stopped = sorted(i for i, root in roots.items() if root == step.index and i != step.index)
            n_checks = sum(1 for c in self.case.checks if set(_check_steps(c)) & ({step.index} | set(stopped)))
            after = ""
            if stopped:
                which = f"step {stopped[0] + 1}" if len(stopped) == 1 else f"steps {_ranges(stopped)}"
                after = f" {which[0].upper()}{which[1:]} need{'s' if len(stopped) == 1 else ''} its result and did not run"
                after += f", so {n_checks} check{'s' if n_checks != 1 else ''} could not be made." if n_checks else "."
            elif n_checks:
                after = f" {n_checks} check{'s' if n_checks != 1 else ''} of this step could not be made."
            if obs.outcome == "missing":
                cause = f"your cudagraph.py does not define {obs.note}, which this case needs."
            elif obs.outcome == "raised" and obs.error is not None and obs.error.type == "NotImplementedError":
                cause = "raised NotImplementedError: this part of your cudagraph.py is not written yet."
            elif obs.outcome == "raised":
                cause = f"{_outcome(obs)}."
            else:
                names = _refs(step)
                cause = f"could not run: {names[0] if names else 'a name it uses'} was not produced by an earlier step."
            self.record(step, "runs" if obs.outcome != "raised" else "runs without an exception", "the step runs", _outcome(obs), cause + after)


def _step_outcome(case: Case, step: Step, obs: StepObservation) -> str:
    """What a step did, in words; a step that did not run names the step it waited for."""
    if obs.outcome != "not_reached":
        return _outcome(obs)
    producer = {s.name: s.index for s in case.steps[: step.index] if s.name}
    for name in _refs(step):
        if name in producer:
            return f"not run: needs {name}, which step {producer[name] + 1} did not produce"
    return _outcome(obs)


def _check_steps(check) -> tuple[int, ...]:
    """The steps a check looks at."""
    if isinstance(check, (StaticBufferCheck, PaddedRowsCheck)):
        return tuple(check.steps)
    if isinstance(check, WitnessCheck):
        return (check.capture, check.replay)
    return (check.step,)


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


def _launch_reason(kind: str, expected: int, observed: int) -> str:
    """One sentence on why the count matters, for the kind of step it is."""
    if kind == "eager":
        return " An eager run pays one launch per op in the list it is given" + (
            " (a fused list holds fewer ops)." if observed > expected else ": call LaunchCounter.bump(1) once per op."
        )
    if kind == "replay" and expected == 1:
        return " A replay is one graph launch, however many ops it holds."
    if kind == "capture":
        return " Capture runs each op once, eagerly, to record it: one launch per op."
    return ""


def _as_tuple(value: object) -> object:
    return tuple(_as_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value


def _same_plain(expected: object, observed: object) -> bool:
    """Equality that does not let True pass for 1, or 2.0 for 2."""
    if isinstance(expected, (list, tuple)):
        return isinstance(observed, tuple) and len(observed) == len(expected) and all(_same_plain(e, o) for e, o in zip(expected, observed))
    if isinstance(expected, bool) or expected is None:
        return observed is expected
    if isinstance(expected, int):
        return isinstance(observed, int) and not isinstance(observed, bool) and observed == expected
    if isinstance(expected, float):
        return isinstance(observed, (int, float)) and not isinstance(observed, bool) and abs(observed - expected) <= 1e-9 * max(1.0, abs(expected))
    return type(observed) is type(expected) and observed == expected


def judge_case(case: Case, oracles: tuple[OracleCall, ...], observation: CaseObservation) -> CaseVerdict:
    """Turn one case's observations into a verdict; never raises on odd observations."""
    judge = _Judge(case, oracles, observation)
    judge.step_health()
    for check in case.checks:
        if set(_check_steps(check)) & judge.dead:
            continue  # collapsed into the line that names the step that stopped it
        judge.current_line = check.line
        if isinstance(check, LaunchesCheck):
            judge.launches(check)
        elif isinstance(check, OutputCheck):
            judge.output(check)
        elif isinstance(check, ValueCheck):
            judge.value(check)
        elif isinstance(check, RaisesCheck):
            judge.raises(check)
        elif isinstance(check, StaticBufferCheck):
            judge.static_buffer(check)
        elif isinstance(check, PaddedRowsCheck):
            judge.padded_rows(check)
        elif isinstance(check, FusedOpsCheck):
            judge.fused_ops(check)
        else:
            judge.witness(check)
    steps = tuple(StepLine(index=s.index, action=s.label, outcome=_step_outcome(case, s, o)) for s, o in zip(case.steps, judge.obs))
    launch_checks = {c.step: c.equals for c in case.checks if isinstance(c, LaunchesCheck)}
    launches = tuple(
        LaunchPoint(step=s.index, label=s.label, expected=launch_checks.get(s.index), observed=o.launches)
        for s, o in zip(case.steps, judge.obs)
        if s.action in ("call", "method") and not s.implicit and (s.index in launch_checks or o.launches) and s.index not in judge.dead
    )  # a step that did not run has no launches to picture: its line above says why
    status = "passed" if judge.first_failure is None else "failed"
    message = "All checks passed." if status == "passed" else judge.first_failure
    return CaseVerdict(status=status, message=message, steps=steps, checks=tuple(judge.lines), launches=launches, line=judge.first_failure_line)
