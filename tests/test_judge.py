"""The judge on hand-made observations.

No submission runs here. Each test builds :class:`grader.observations.CaseObservation`
objects by hand (the form the grader decodes from a worker's frame), for a case
loaded from a small YAML text, and checks the verdict: passed or failed, and a
message a student can act on (the step, what was expected, what happened). The
protocol that carries observations is tested in test_observations.py, the worker's
interpreter that makes them in test_interpreter.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.spec_text import FUSE_STEPS, FUSED_CHECK, RUNNER_STEPS, load_case

from grader.judging.judge import judge_case
from grader.observations import (
    CaseObservation,
    EntryObservation,
    EnumValue,
    ListedOp,
    OpaqueValue,
    Raised,
    StepObservation,
    WitnessCall,
)


def GraphObservation(  # noqa: N802 - an entry of the CUDA-graph lab's snapshot (its lab.yaml: snapshot)
    key, shape, static_input_id, static_input_address, static_input, num_ops, output=None, entry_id=-1
) -> EntryObservation:
    fields = (
        ("static_input_id", static_input_id),
        ("static_input_address", static_input_address),
        ("static_input", static_input),
        ("shape", shape),
        ("num_ops", num_ops),
        ("output", output),
    )
    return EntryObservation(key, entry_id, fields)


def judge(steps: str, checks: str, observations: list[StepObservation]):
    case, oracles = load_case(steps, checks)
    assert len(observations) == len(case.steps), [s.label for s in case.steps]
    return judge_case(case, oracles, CaseObservation(case.uid, tuple(observations)))


# ------------------------------------------------------------------ the runner world, by hand
def seeded(seed: int, shape=(4, 8), dtype="float32") -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def chain(x: np.ndarray) -> np.ndarray:
    """relu, add 1.5, tanh: computed here independently of the lab's op vocabulary."""
    return np.tanh(np.maximum(x, np.float32(0)) + np.float32(1.5))


X1, X2 = seeded(1), seeded(2)
CALLER1, CALLER2 = 0x1000, 0x2000  # the caller's arrays
STATIC = 0x5000  # the static input buffer
BUFFER_ID = 4242


def witness(first_op_address: int | None, positions=(0, 1, 2)) -> tuple[WitnessCall, ...]:
    calls = []
    for p in positions:
        address = first_op_address if p == 0 else 0x9000 + p  # later ops see intermediates
        calls.append(WitnessCall(list_id=0, position=p, address=address, shape=(4, 8), dtype="float32"))
    return tuple(calls)


def graphs(
    content: np.ndarray, buffer_id: int = BUFFER_ID, address: int = STATIC, **entry
) -> tuple[GraphObservation, ...]:
    fields = {"shape": (4, 8), "num_ops": 3, "output": chain(content), "entry_id": 0x7000, **entry}
    return (
        GraphObservation(
            key="(4, 8)", static_input_id=buffer_id, static_input_address=address, static_input=content.copy(), **fields
        ),
    )


def built() -> StepObservation:
    return StepObservation(0, "returned", value=OpaqueValue("GraphRunner"), launches=0)


def capture(**overrides) -> StepObservation:
    fields = {
        "index": 1,
        "outcome": "returned",
        "value": chain(X1),
        "launches": 3,
        "witness": witness(STATIC),
        "input_address": CALLER1,
        "graphs": graphs(X1),
    }
    fields.update(overrides)
    return StepObservation(**fields)


def replay(**overrides) -> StepObservation:
    fields = {
        "index": 2,
        "outcome": "returned",
        "value": chain(X2),
        "launches": 1,
        "witness": witness(STATIC),
        "input_address": CALLER2,
        "graphs": graphs(X2),
    }
    fields.update(overrides)
    return StepObservation(**fields)


def runner_verdict(checks: str, **replay_overrides):
    return judge(RUNNER_STEPS, checks, [built(), capture(), replay(**replay_overrides)])


REPLAY_LABEL = "Step 3 (second = runner(float32[4, 8] seed 2))"


def failed_lines(verdict):
    return [line for line in verdict.checks if not line.passed]


# ------------------------------------------------------------------ launches
def test_launches_right_pass():
    verdict = runner_verdict("launches: {step: first, equals: 3}\nlaunches: {step: second, equals: 1}")
    assert verdict.status == "passed", verdict.message
    assert verdict.message == "All checks passed."
    assert [line.passed for line in verdict.checks] == [True, True]
    assert [(p.step, p.expected, p.observed) for p in verdict.launches] == [(1, 3, 3), (2, 1, 1)]


def test_launches_wrong_fail_naming_the_step_expected_and_observed():
    verdict = runner_verdict("launches: {step: first, equals: 3}\nlaunches: {step: second, equals: 1}", launches=3)
    assert verdict.status == "failed"
    assert verdict.message.startswith(REPLAY_LABEL + ": ")
    assert "should cost 1 launch but cost 3" in verdict.message
    assert "one graph launch" in verdict.message
    (line,) = failed_lines(verdict)
    assert (line.step, line.expected, line.observed) == (2, "1", "3")


def test_unreadable_launch_counter_fails():
    verdict = runner_verdict("launches: {step: second, equals: 1}", launches=None)
    assert verdict.status == "failed" and "LaunchCounter.n" in verdict.message


# ------------------------------------------------------------------ output
def test_output_equal_to_the_oracle_passes():
    verdict = runner_verdict("output: {step: second, oracle: true, shape: [4, 8], dtype: float32}")
    assert verdict.status == "passed", verdict.message
    assert len(verdict.checks) == 3 and all(line.passed for line in verdict.checks)


def test_output_within_float32_tolerance_passes():
    verdict = runner_verdict("output: {step: second, oracle: true}", value=chain(X2) + np.float32(1e-7))
    assert verdict.status == "passed", verdict.message


def test_output_wrong_value_fails_pointing_at_the_index():
    wrong = chain(X2)
    wrong[2, 5] += 0.01
    verdict = runner_verdict("output: {step: second, oracle: true}", value=wrong)
    assert verdict.status == "failed"
    assert verdict.message.startswith(REPLAY_LABEL + ": wrong output: at index [2, 5]")
    assert "1 of 32 values differ" in verdict.message
    (line,) = verdict.checks
    assert "relu, add(1.5), tanh" in line.what
    assert line.expected.startswith("float32[4, 8] = [")


def test_output_stale_value_from_capture_fails():
    verdict = runner_verdict("output: {step: second, oracle: true}", value=chain(X1))
    assert verdict.status == "failed" and "wrong output" in verdict.message


def test_output_wrong_shape_fails():
    verdict = runner_verdict("output: {step: second, oracle: true, shape: [4, 8]}", value=chain(X2)[:3])
    assert verdict.status == "failed"
    assert "returned shape [3, 8], expected [4, 8]" in verdict.message
    assert len(failed_lines(verdict)) == 2  # the shape line and the oracle line
    oracle_only = runner_verdict("output: {step: second, oracle: true}", value=chain(X2)[:3])
    assert oracle_only.status == "failed" and "wrong output: shape [3, 8] instead of [4, 8]" in oracle_only.message


def test_output_wrong_dtype_fails():
    verdict = runner_verdict("output: {step: second, oracle: true, dtype: float32}", value=chain(X2).astype(np.float64))
    assert verdict.status == "failed"
    assert "returned dtype float64, expected float32" in verdict.message


def test_output_not_an_array_fails():
    verdict = runner_verdict("output: {step: second, oracle: true}", value=OpaqueValue("list"))
    assert verdict.status == "failed"
    assert "expected an array, got a list object" in verdict.message


def test_output_literal_equals_and_oracle_are_both_compared():
    literal = "{values: [[1.0, 2.0]], dtype: float32}"
    steps = RUNNER_STEPS
    # Both given: the oracle passes but the literal does not, so the check must fail.
    verdict = judge(steps, f"output: {{step: second, oracle: true, equals: {literal}}}", [built(), capture(), replay()])
    assert verdict.status == "failed", "a check that names two expectations must compare both"
    assert "shape [4, 8] instead of [1, 2]" in verdict.message


def test_output_literal_equals():
    steps = RUNNER_STEPS
    checks = "output: {step: second, equals: {values: [[1.0, 2.0]], dtype: float32}}"
    ok = judge(steps, checks, [built(), capture(), replay(value=np.array([[1.0, 2.0]], dtype=np.float32))])
    bad = judge(steps, checks, [built(), capture(), replay(value=np.array([[1.0, 2.5]], dtype=np.float32))])
    assert ok.status == "passed", ok.message
    assert bad.status == "failed" and "at index [0, 1] the value is 2.5 but should be 2" in bad.message


# ------------------------------------------------------------------ witness (Constraint 2)
WITNESS = "witness: {of: runner, capture: first, replay: second}\noutput: {step: second, oracle: true}"


def test_witness_static_buffer_on_replay_passes():
    verdict = runner_verdict(WITNESS)
    assert verdict.status == "passed", verdict.message


def test_witness_right_output_but_op_ran_on_the_callers_array_fails():
    verdict = runner_verdict(WITNESS, witness=witness(CALLER2))
    assert verdict.status == "failed"
    assert verdict.message.startswith(REPLAY_LABEL + ": ")
    assert "Constraint 2" in verdict.message and "caller's array" in verdict.message
    assert [line.passed for line in verdict.checks] == [False, True]  # the output itself was right
    (line,) = failed_lines(verdict)
    assert (line.expected, line.observed) == ("the static input buffer", "the caller's own array")


def test_witness_capture_on_the_callers_array_fails():
    verdict = judge(
        RUNNER_STEPS, WITNESS, [built(), capture(witness=witness(CALLER1)), replay(witness=witness(CALLER1))]
    )
    assert verdict.status == "failed" and "at capture" in verdict.message and "caller's array" in verdict.message
    assert verdict.message.startswith("Step 2")  # the capture is where the fault is


def test_witness_replay_on_the_callers_array_is_blamed_on_the_replay():
    verdict = judge(RUNNER_STEPS, WITNESS, [built(), capture(), replay(witness=witness(CALLER2))])
    assert verdict.status == "failed" and "on replay" in verdict.message and "Constraint 2" in verdict.message


def test_witness_replay_on_a_new_buffer_fails():
    verdict = runner_verdict(WITNESS, witness=witness(0x7000))
    assert verdict.status == "failed"
    assert "different buffer" in verdict.message and "Constraint 2" in verdict.message


def test_a_replay_that_never_calls_op_0_is_not_the_witness_checks_failure():
    """It handed the op nothing: the buffer claim holds; the stale result is the replay cases' claim."""
    verdict = runner_verdict("witness: {of: runner, capture: first, replay: second}", witness=(), value=chain(X1))
    assert verdict.status == "passed", verdict.message
    stale = runner_verdict("output: {step: second, oracle: true}", witness=(), value=chain(X1))
    assert stale.status == "failed" and "wrong output" in stale.message


# ------------------------------------------------------------------ same_entries
SAME_ENTRIES = "same_entries: {of: runner, steps: [first, second]}"


@pytest.mark.parametrize(
    "after_replay, message",
    [
        ((0x7000,), None),
        ((0x7001,), "replaced the GraphEntry of a shape runner had already captured: it captured again"),
        ((0x7000, 0x7001), "added a GraphEntry although runner had already captured a graph for its shape"),
        ((), "dropped a GraphEntry from runner.graphs"),
    ],
)
def test_same_entries_tells_a_cache_hit_by_the_entries_the_table_holds(after_replay, message):
    entries = tuple(
        GraphObservation(
            key=f"k{n}",
            shape=(4, 8),
            static_input_id=BUFFER_ID,
            static_input_address=STATIC,
            static_input=X2.copy(),
            num_ops=3,
            entry_id=n,
        )
        for n in after_replay
    )
    # whatever the replay cost or returned: those are other behaviours' claims
    verdict = runner_verdict(SAME_ENTRIES, graphs=entries, launches=3, value=chain(X1))
    if message is None:
        assert verdict.status == "passed", verdict.message
    else:
        assert verdict.status == "failed" and message in verdict.message, verdict.message
        assert verdict.message.startswith(REPLAY_LABEL)


def test_capture_that_never_calls_op_0_fails():
    verdict = judge(
        RUNNER_STEPS, "witness: {of: runner, capture: first, replay: second}", [built(), capture(witness=()), replay()]
    )
    assert verdict.status == "failed" and "never called while capturing" in verdict.message


def test_witness_ignores_calls_of_another_op_list():
    other_list = tuple(WitnessCall(1, w.position, w.address, w.shape, w.dtype) for w in witness(STATIC))
    verdict = runner_verdict("witness: {of: runner, capture: first, replay: second}", witness=other_list)
    assert [line.observed for line in verdict.checks] == ["not called on replay"]  # another runner's ops: not seen


# ------------------------------------------------------------------ static_buffer
STATIC_CHECK = "static_buffer: {of: runner, steps: [first, second]}"


def test_static_buffer_same_object_holding_each_input_passes():
    verdict = runner_verdict(STATIC_CHECK)
    assert verdict.status == "passed", verdict.message
    assert verdict.checks[-1].what == "one static_input buffer across the calls"


def test_static_buffer_different_buffer_id_on_replay_fails():
    verdict = runner_verdict(STATIC_CHECK, graphs=graphs(X2, buffer_id=BUFFER_ID + 1))
    assert verdict.status == "failed"
    assert verdict.message.startswith(REPLAY_LABEL + ": ")
    assert "copied into a new buffer" in verdict.message and "Constraint 2" in verdict.message


def test_static_buffer_different_address_on_replay_fails():
    verdict = runner_verdict(STATIC_CHECK, graphs=graphs(X2, address=STATIC + 64))
    assert verdict.status == "failed" and "new buffer" in verdict.message


def test_static_buffer_not_holding_the_latest_input_fails():
    verdict = runner_verdict(STATIC_CHECK, graphs=graphs(X1))  # still the capture's input
    assert verdict.status == "failed"
    assert "does not hold the input of this call" in verdict.message


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"shape": None}, "GraphEntry's shape is not a tuple of integers"),
        ({"shape": (8, 8)}, "GraphEntry's shape is [8, 8]"),
        ({"num_ops": 2}, "num_ops is 2, not the 3 ops"),
        ({"num_ops": None}, "num_ops is None"),
    ],
)
def test_static_buffer_checks_the_graph_entry_record(entry, message):
    verdict = runner_verdict(STATIC_CHECK, graphs=graphs(X2, **entry))
    assert verdict.status == "failed" and message in verdict.message, verdict.message


def test_static_buffer_wrong_dtype_fails():
    verdict = runner_verdict(STATIC_CHECK, graphs=graphs(X2.astype(np.float64)))
    assert verdict.status == "failed" and "static input buffer is float64 but the input is float32" in verdict.message


def test_static_buffer_missing_entry_fails():
    verdict = runner_verdict(STATIC_CHECK, graphs=())
    assert verdict.status == "failed" and "no GraphEntry" in verdict.message and "[4, 8]" in verdict.message


def test_static_buffer_of_another_shape_does_not_count():
    odd = (GraphObservation("(2, 8)", (2, 8), BUFFER_ID, STATIC, X2[:2].copy(), 3),)
    verdict = runner_verdict(STATIC_CHECK, graphs=odd)
    assert verdict.status == "failed" and "no GraphEntry" in verdict.message


# ------------------------------------------------------------------ value: strict
READ_N = """\
          - read: n
            of: LaunchCounter
            as: count
"""


def read_verdict(expected: str, observed: object):
    return judge(
        READ_N, f"value: {{step: count, equals: {expected}}}", [StepObservation(0, "returned", value=observed)]
    )


@pytest.mark.parametrize(
    "expected, observed, passes",
    [
        ("1", 1, True),
        ("1", True, False),  # True is not 1
        ("true", 1, False),  # and 1 is not True
        ("true", True, True),
        ("2", 2.0, False),  # an int expectation wants an int
        ("2.0", 2, True),  # a float expectation accepts an int within tolerance
        ("2.0", 2.0000000001, True),
        ("2.0", 2.001, False),
        ("null", None, True),
        ("null", 0, False),
        ("0", None, False),
        ("abc", "abc", True),
        ("abc", "abd", False),
        ("[1, 2]", (1, 2), True),
        ("[1, 2]", (1, 2, 3), False),
        ("[1, 2]", (1, True), False),
        ("1", OpaqueValue("int"), False),
    ],
)
def test_value_checks_are_strict(expected, observed, passes):
    verdict = read_verdict(expected, observed)
    assert (verdict.status == "passed") is passes, verdict.message
    if not passes:
        assert verdict.message.startswith("Step 1 (read LaunchCounter.n): the value returned should be ")


def test_value_failure_message_shows_expected_and_observed():
    verdict = read_verdict("1", True)
    assert verdict.message == "Step 1 (read LaunchCounter.n): the value returned should be 1, was True."
    (line,) = verdict.checks
    assert (line.expected, line.observed, line.passed) == ("1", "True", False)


# ------------------------------------------------------------------ step_mode
MACHINE = """\
          - build: InferenceGraphCapture
            as: sm
            args: [1]
            kwargs: {enabled: true}
          - method: advance
            of: sm
            as: step1
"""


def machine_verdict(mode_value: object, outcome: str = "returned"):
    observations = [
        StepObservation(0, "returned", value=OpaqueValue("InferenceGraphCapture")),
        StepObservation(1, "returned", value=None),
        StepObservation(
            2,
            outcome,
            value=mode_value,
            error=Raised("AttributeError", "no step_mode") if outcome == "raised" else None,
        ),
    ]
    return judge(MACHINE, "step_mode: {of: sm, equals: CAPTURE, after: step1}", observations)


def test_step_mode_enum_member_passes():
    assert machine_verdict(EnumValue("StepMode", "CAPTURE")).status == "passed"


def test_step_mode_other_member_fails():
    verdict = machine_verdict(EnumValue("StepMode", "REPLAY"))
    assert verdict.status == "failed"
    assert "sm.step_mode() should be StepMode.CAPTURE, was StepMode.REPLAY" in verdict.message


def test_step_mode_member_of_another_enum_class_fails():
    assert machine_verdict(EnumValue("Phase", "CAPTURE")).status == "failed"


def test_step_mode_plain_string_is_not_the_enum():
    verdict = machine_verdict("CAPTURE")
    assert verdict.status == "failed"
    assert "should be StepMode.CAPTURE, was 'CAPTURE'" in verdict.message


def test_step_mode_that_raised_fails():
    verdict = machine_verdict(None, outcome="raised")
    assert verdict.status == "failed" and "AttributeError" in verdict.message


# ------------------------------------------------------------------ raises, and steps that raise
BAD_CALL = """\
          - build: GraphRunner
            as: runner
            args: [{ops: [relu]}]
          - method: bump
            of: LaunchCounter
            args: [-1]
            as: bad
"""


def raise_verdict(checks: str, outcome: str, error: Raised | None = None):
    return judge(BAD_CALL, checks, [built(), StepObservation(1, outcome, value=None, error=error, launches=0)])


def test_raises_with_type():
    checks = "raises: {step: bad, type: ValueError}"
    assert raise_verdict(checks, "raised", Raised("ValueError", "k must be positive")).status == "passed"
    wrong = raise_verdict(checks, "raised", Raised("TypeError", "nope"))
    assert wrong.status == "failed"
    assert "should raise ValueError, but raised TypeError: nope" in wrong.message
    returned = raise_verdict(checks, "returned")
    assert returned.status == "failed" and "should raise ValueError, but returned None" in returned.message


def test_raises_without_type():
    checks = "raises: {step: bad}"
    assert raise_verdict(checks, "raised", Raised("RuntimeError", "")).status == "passed"
    verdict = raise_verdict(checks, "returned")
    assert verdict.status == "failed" and "should raise an exception" in verdict.message


def test_a_step_that_raised_without_a_raises_check_fails_the_case():
    verdict = runner_verdict(
        "launches: {step: first, equals: 3}",
        outcome="raised",
        value=None,
        error=Raised("RuntimeError", "boom"),
        launches=1,
    )
    assert verdict.status == "failed"
    assert verdict.message == REPLAY_LABEL + ": raised RuntimeError: boom."
    assert verdict.steps[2].outcome == "raised RuntimeError: boom"


def test_missing_contract_name_fails_naming_it():
    observations = [
        StepObservation(0, "missing", note="GraphRunner"),
        StepObservation(1, "not_reached", note="runner was not produced by its step"),
        StepObservation(2, "not_reached", note="runner was not produced by its step"),
    ]
    verdict = judge(RUNNER_STEPS, "launches: {step: first, equals: 3}", observations)
    assert verdict.status == "failed"
    assert verdict.message.startswith("Step 1 (runner = GraphRunner([relu, add(1.5), tanh])): ")
    assert "does not define GraphRunner" in verdict.message
    assert "could not run" in verdict.steps[0].outcome


def test_not_reached_step_fails():
    observations = [built(), capture(), StepObservation(2, "not_reached", note="runner was not produced by its step")]
    verdict = judge(RUNNER_STEPS, "launches: {step: first, equals: 3}", observations)
    assert verdict.status == "failed" and "runner was not produced" in verdict.message


def test_verdict_lists_every_step_as_a_student_reads_it():
    verdict = runner_verdict("launches: {step: second, equals: 1}")
    assert [s.action for s in verdict.steps] == [
        "runner = GraphRunner([relu, add(1.5), tanh])",
        "first = runner(float32[4, 8] seed 1)",
        "second = runner(float32[4, 8] seed 2)",
    ]
    assert verdict.steps[0].outcome == "returned a GraphRunner object"
    assert verdict.steps[2].outcome.startswith("returned float32[4, 8] = [")


# ------------------------------------------------------------------ bounded verdicts
def test_a_huge_observed_value_gives_a_bounded_verdict():
    """Nested tuples of long strings once made an 18 MB report: every rendering is capped."""
    huge = tuple(tuple(chr(65 + i % 26) * 200 for _ in range(30)) for i in range(30))
    verdicts = [
        read_verdict("1", huge),
        read_verdict("x" * 900, "y" * 5000),
        runner_verdict("output: {step: second, oracle: true, shape: [4, 8], dtype: float32}", value=huge),
    ]
    for verdict in verdicts:
        assert verdict.status == "failed"
        assert len(verdict.message) <= 500, len(verdict.message)
        for line in verdict.checks:
            for text in (line.what, line.expected, line.observed):
                assert len(text) <= 300, (len(text), text[:80])
        for step in verdict.steps:
            assert len(step.outcome) <= 300, len(step.outcome)
    (line,) = verdicts[0].checks
    assert line.observed.startswith("[['AAAA") and line.observed.endswith("…")
    assert verdicts[1].checks[0].expected.endswith("…")


def test_describe_keeps_short_values_whole_and_cuts_long_ones():
    from grader.judging.judge import describe

    assert describe((1, "a", None, (2.5, True))) == "[1, 'a', None, [2.5, True]]"
    assert describe(tuple(range(20))) == "[0, 1, 2, 3, 4, 5, 6, 7, …]"
    assert describe("z" * 1000) == "'" + "z" * 198 + "…"
    assert len(describe(OpaqueValue("T" * 2000))) == 200


# ------------------------------------------------------------------ fused_ops
def fused_verdict(listed):
    return judge(
        FUSE_STEPS,
        FUSED_CHECK,
        [
            StepObservation(
                0,
                "returned",
                value=None,
                launches=0,
                ops=None if listed is None else tuple(ListedOp(*o) for o in listed),
            )
        ],
    )


def test_fused_ops_one_op_per_maximal_run_passes():
    verdict = fused_verdict([(False, -1, -1, True), (True, 0, 3, False), (True, 0, 4, True)])
    assert verdict.status == "passed", verdict.message


@pytest.mark.parametrize(
    ("listed", "message"),
    [
        # pairs: [add, mul] fused, relu left alone
        (
            [(False, -1, -1, True), (True, 0, 2, True), (True, 0, 3, False), (True, 0, 4, True)],
            "returned 4 ops, expected 3: each maximal run of adjacent elementwise ops becomes one op, merged whole",
        ),
        # nothing fused: the five ops as given
        (
            [(True, 0, i, i != 3) for i in range(5)],
            "returned 5 ops, expected 3: nothing was fused",
        ),
        # merged across softmax
        (
            [(False, -1, -1, True), (True, 0, 4, True)],
            "returned 2 ops, expected 3: ops were merged that must stay apart",
        ),
        # the fused op is not marked elementwise
        ([(False, -1, -1, False), (True, 0, 3, False), (True, 0, 4, True)], "marked elementwise = True"),
        # the lone tanh is wrapped in a new callable
        ([(False, -1, -1, True), (True, 0, 3, False), (False, -1, -1, True)], "very op object"),
        # softmax replaced by a copy: not "a lone elementwise op"
        (
            [(False, -1, -1, True), (False, -1, -1, False), (True, 0, 4, True)],
            "op 3 should be kept as the very op object it was given (an op that is not elementwise",
        ),
        (None, "should return a list of ops"),
    ],
)
def test_fused_ops_wrong_structure_fails(listed, message):
    verdict = fused_verdict(listed)
    assert verdict.status == "failed" and message in verdict.message, verdict.message


def test_a_case_s_oracle_is_made_once_and_cannot_be_written_to():
    """The expected arrays are the same for every submission: made once per case, read-only, so
    no check can change what the next submission is judged against."""
    from grader.judging.judge import Oracle

    case, oracles = load_case(RUNNER_STEPS, "output: {step: second, oracle: true}")
    oracle = Oracle.of(case, oracles)
    assert Oracle.of(case, oracles) is oracle
    assert oracle.outputs and all(not a.flags.writeable for a in (*oracle.inputs.values(), *oracle.outputs.values()))
    np.testing.assert_array_equal(oracle.outputs[2], chain(X2))
    with pytest.raises(ValueError, match="read-only"):
        oracle.outputs[2][0, 0] = 1.0
    twin, twin_oracles = load_case(RUNNER_STEPS, "output: {step: second, oracle: true}")
    assert Oracle.of(twin, twin_oracles) is not oracle  # another loading: its own
    # judged twice, the same verdict: nothing of the first judging stays in the oracle
    first = runner_verdict("output: {step: second, oracle: true}", value=chain(X1))
    again = runner_verdict("output: {step: second, oracle: true}", value=chain(X1))
    assert first == again and first.status == "failed"


ENTRY_CHECK = "entry_output: {of: runner, steps: [first, second]}"


@pytest.mark.parametrize("output", [chain(X1), None])
def test_entry_output_after_a_replay_is_graphgrades_reading_not_the_static_buffers(output):
    """The handout stores output at capture only: static_buffer passes an entry whose output is the
    capture's; entry_output (graphgrade's stricter reading) fails it, and says so."""
    assert runner_verdict(STATIC_CHECK, graphs=graphs(X2, output=output)).status == "passed"
    verdict = runner_verdict(ENTRY_CHECK, graphs=graphs(X2, output=output))
    assert verdict.status == "failed" and "output does not hold this call's result" in verdict.message


def test_entry_output_holding_each_result_passes():
    assert runner_verdict(ENTRY_CHECK, graphs=graphs(X2)).status == "passed"
