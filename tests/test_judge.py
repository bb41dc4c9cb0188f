"""The judge on hand-made observations, and the protocol that carries observations.

No submission runs here. Each test builds :class:`grader.protocol.CaseObservation`
objects by hand (the form the grader decodes from a worker's frame), for a case
loaded from a small YAML text, and checks the verdict: passed or failed, and a
message a student can act on (the step, what was expected, what happened).
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from grader import protocol
from grader.judge import judge_case
from grader.loader import load_spec_text
from grader.protocol import (
    ListedOp,
    CaseObservation,
    EnumValue,
    GraphObservation,
    OpaqueValue,
    ProtocolError,
    Raised,
    StepObservation,
    WitnessCall,
)

HEADER = """\
format: 1
specs:
  - id: judged
    title: Judged spec
    tag: static-buffer
    points: 1
    visibility: visible
    explanation: Explains.
    hint: Hints.
    cases:
      - id: the-case
        description: A case for the judge.
        steps:
"""

# Steps 0..2: build a runner, capture (first), replay (second).
RUNNER_STEPS = """\
          - build: GraphRunner
            as: runner
            args: [{ops: [relu, {add: 1.5}, tanh]}]
          - call: runner
            as: first
            args: [{array: {shape: [4, 8], dtype: float32, seed: 1}}]
          - call: runner
            as: second
            args: [{array: {shape: [4, 8], dtype: float32, seed: 2}}]
"""


def load_case(steps: str, checks: str):
    """A Case and its oracle calls, loaded by the real loader from YAML text."""
    text = HEADER + steps + "        checks:\n" + "".join(f"          - {c}\n" for c in checks.strip().splitlines())
    oracles: dict = {}
    spec_file = load_spec_text(text, "judge.yaml", oracles)
    (case,) = spec_file.specs[0].cases
    return case, oracles[case.uid]


def judge(steps: str, checks: str, observations: list[StepObservation]):
    case, oracles = load_case(steps, checks)
    assert len(observations) == len(case.steps), [s.label for s in case.steps]
    return judge_case(case, oracles, CaseObservation(case.uid, tuple(observations)))


# ------------------------------------------------------------------ the runner world, by hand
def seeded(seed: int, shape=(4, 8), dtype="float32") -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def chain(x: np.ndarray) -> np.ndarray:
    """relu, add 1.5, tanh: computed here independently of grader.ops."""
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


def graphs(content: np.ndarray, buffer_id: int = BUFFER_ID, address: int = STATIC, **entry) -> tuple[GraphObservation, ...]:
    fields = {"shape": (4, 8), "num_ops": 3, "output": chain(content), **entry}
    return (GraphObservation(key="(4, 8)", static_input_id=buffer_id, static_input_address=address, static_input=content.copy(), **fields),)


def built() -> StepObservation:
    return StepObservation(0, "returned", value=OpaqueValue("GraphRunner"), launches=0)


def capture(**overrides) -> StepObservation:
    fields = {"index": 1, "outcome": "returned", "value": chain(X1), "launches": 3, "witness": witness(STATIC), "input_address": CALLER1, "graphs": graphs(X1)}
    fields.update(overrides)
    return StepObservation(**fields)


def replay(**overrides) -> StepObservation:
    fields = {"index": 2, "outcome": "returned", "value": chain(X2), "launches": 1, "witness": witness(STATIC), "input_address": CALLER2, "graphs": graphs(X2)}
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
    verdict = judge(RUNNER_STEPS, WITNESS, [built(), capture(witness=witness(CALLER1)), replay(witness=witness(CALLER1))])
    assert verdict.status == "failed" and "Constraint 2" in verdict.message


def test_witness_replay_on_a_new_buffer_fails():
    verdict = runner_verdict(WITNESS, witness=witness(0x7000))
    assert verdict.status == "failed"
    assert "different buffer" in verdict.message and "Constraint 2" in verdict.message


def test_replay_that_never_calls_op_0_fails_as_stale():
    verdict = runner_verdict("witness: {of: runner, capture: first, replay: second}", witness=(), value=chain(X1))
    assert verdict.status == "failed"
    assert "op 0 was never called on replay" in verdict.message and "stale" in verdict.message


def test_capture_that_never_calls_op_0_fails():
    verdict = judge(RUNNER_STEPS, "witness: {of: runner, capture: first, replay: second}", [built(), capture(witness=()), replay()])
    assert verdict.status == "failed" and "never called while capturing" in verdict.message


def test_witness_ignores_calls_of_another_op_list():
    other_list = tuple(WitnessCall(1, w.position, w.address, w.shape, w.dtype) for w in witness(STATIC))
    verdict = runner_verdict("witness: {of: runner, capture: first, replay: second}", witness=other_list)
    assert verdict.status == "failed" and "never called on replay" in verdict.message


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
        ({"output": chain(X1)}, "output does not hold this call's result"),
        ({"output": None}, "output does not hold this call's result"),
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
    return judge(READ_N, f"value: {{step: count, equals: {expected}}}", [StepObservation(0, "returned", value=observed)])


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
        StepObservation(2, outcome, value=mode_value, error=Raised("AttributeError", "no step_mode") if outcome == "raised" else None),
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


def test_byte_swapped_array_travels_as_its_values():
    encoder = protocol.new_encoder()
    encoded = encoder.value(np.arange(3, dtype=">f4"))
    assert encoded["ndarray"]["dtype"] == "float32"
    decoded = protocol._Decoder(encoder.blobs).value(encoded, "value")
    assert decoded.dtype == np.float32 and decoded.tolist() == [0.0, 1.0, 2.0]


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
    verdict = runner_verdict("launches: {step: first, equals: 3}", outcome="raised", value=None, error=Raised("RuntimeError", "boom"), launches=1)
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


# ================================================================== protocol
def frame_body(header: dict | bytes, blobs: list[bytes] = (), magic: bytes = protocol.MAGIC) -> bytes:
    """An observation frame body built by hand (not by the encoder under test)."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    parts = [magic, struct.pack("<II", len(raw), len(blobs)), raw]
    for blob in blobs:
        parts += [struct.pack("<Q", len(blob)), blob]
    return b"".join(parts)


def step_record(index: int = 0, **fields) -> dict:
    record = {"index": index, "outcome": "returned", "value": None, "error": None, "launches": 1, "witness": [], "input_address": None, "graphs": None, "note": ""}
    record.update(fields)
    return record


ARRAY = np.arange(6, dtype=np.float32).reshape(2, 3)


def good_header(**step_fields) -> dict:
    value = {"ndarray": {"dtype": "float32", "shape": [2, 3], "blob": 0}}
    return {"protocol": protocol.PROTOCOL_VERSION, "case": "s/c", "steps": [step_record(value=value, **step_fields)]}


def test_a_well_formed_frame_decodes():
    obs = protocol.decode_observations(frame_body(good_header(), [ARRAY.tobytes()]), "s/c", 1)
    assert obs.case == "s/c"
    (step,) = obs.steps
    assert step.outcome == "returned" and step.launches == 1
    assert np.array_equal(step.value, ARRAY)


@pytest.mark.parametrize(
    "name, body, expected_case, steps",
    [
        ("bad magic", frame_body(good_header(), [ARRAY.tobytes()], magic=b"PK\x03\x04"), "s/c", 1),
        ("short", protocol.MAGIC + b"\x00", "s/c", 1),
        ("wrong case id", frame_body(good_header(), [ARRAY.tobytes()]), "s/other", 1),
        ("blob size mismatch", frame_body(good_header(), [ARRAY.tobytes()[:20]]), "s/c", 1),
        ("blob index out of range", frame_body(good_header(), []), "s/c", 1),
        ("unknown dtype", frame_body({**good_header(), "steps": [step_record(value={"ndarray": {"dtype": "object", "shape": [2, 3], "blob": 0}})]}, [ARRAY.tobytes()]), "s/c", 1),
        ("extra top-level key", frame_body({**good_header(), "pickle": "x"}, [ARRAY.tobytes()]), "s/c", 1),
        ("extra step key", frame_body(good_header(verdict="passed"), [ARRAY.tobytes()]), "s/c", 1),
        ("extra array key", frame_body({**good_header(), "steps": [step_record(value={"ndarray": {"dtype": "float32", "shape": [2, 3], "blob": 0, "order": "F"}})]}, [ARRAY.tobytes()]), "s/c", 1),
        ("too many steps", frame_body({**good_header(), "steps": good_header()["steps"] + [step_record(1)]}, [ARRAY.tobytes()]), "s/c", 1),
        ("too few steps", frame_body(good_header(), [ARRAY.tobytes()]), "s/c", 2),
        ("trailing bytes", frame_body(good_header(), [ARRAY.tobytes()]) + b"\x00", "s/c", 1),
        ("header not JSON", frame_body(b"{not json", []), "s/c", 1),
        ("wrong protocol", frame_body({**good_header(), "protocol": 99}, [ARRAY.tobytes()]), "s/c", 1),
        ("unknown outcome", frame_body(good_header(outcome="passed"), [ARRAY.tobytes()]), "s/c", 1),
        ("unknown value tag", frame_body({**good_header(), "steps": [step_record(value={"pickle": "gASV"})]}), "s/c", 1),
        ("NaN outside its tag", frame_body(b'{"protocol": 1, "case": "s/c", "steps": [{"index": 0, "outcome": "returned", "value": NaN}]}'), "s/c", 1),
        ("steps out of order", frame_body({"protocol": 1, "case": "s/c", "steps": [step_record(1), step_record(0)]}), "s/c", 2),
        ("blob used twice", frame_body({"protocol": 1, "case": "s/c", "steps": [step_record(value={"list": [{"ndarray": {"dtype": "float32", "shape": [2, 3], "blob": 0}}] * 2})]}, [ARRAY.tobytes()]), "s/c", 1),
        ("launches not an integer", frame_body(good_header(launches=True), [ARRAY.tobytes()]), "s/c", 1),
        ("witness entry malformed", frame_body(good_header(witness=[[0, 0, 1]]), [ARRAY.tobytes()]), "s/c", 1),
        ("graph entry extra key", frame_body(good_header(graphs=[{"key": "k", "shape": None, "static_input_id": 1, "static_input_address": 2, "static_input": None, "num_ops": 1, "x": 1}]), [ARRAY.tobytes()]), "s/c", 1),
        ("text too long", frame_body(good_header(note="x" * (protocol.MAX_TEXT + 1)), [ARRAY.tobytes()]), "s/c", 1),
        ("blob count over the frame", protocol.MAGIC + struct.pack("<II", 2, 3) + b"{}", "s/c", 1),
    ],
)
def test_decode_rejects_malformed_frames(name, body, expected_case, steps):
    with pytest.raises(ProtocolError):
        protocol.decode_observations(body, expected_case, steps)


@pytest.mark.parametrize("dtype, shape", [("float32", (4, 8)), ("float64", (3,)), ("int64", (2, 2, 2)), ("bool", (5,)), ("float32", (0, 3))])
def test_an_ndarray_blob_decodes_to_a_plain_array_of_exactly_its_dtype_and_shape(dtype, shape):
    class Sneaky(np.ndarray):
        def __eq__(self, other):  # a submission's array that claims equality with anything
            return True

    original = (np.arange(int(np.prod(shape))) % 3).astype(dtype).reshape(shape)
    encoder = protocol.new_encoder()
    value = encoder.value(original.view(Sneaky))
    frame = protocol.encode_observations("s/c", [step_record(value=value)], encoder.blobs)
    body, rest = protocol.split_frame(frame)
    assert rest == b""
    (step,) = protocol.decode_observations(body, "s/c", 1).steps
    decoded = step.value
    assert type(decoded) is np.ndarray
    assert decoded.dtype == np.dtype(dtype) and decoded.shape == shape
    assert decoded.flags.owndata and decoded.flags.writeable and decoded.flags.c_contiguous
    assert np.array_equal(decoded, original)


def test_other_values_decode_to_plain_data():
    encoder = protocol.new_encoder()
    import enum

    class StepMode(enum.Enum):
        CAPTURE = 1

    record = step_record(value=encoder.value([1, 2.5, "x", None, True, StepMode.CAPTURE, object()]))
    body, _ = protocol.split_frame(protocol.encode_observations("s/c", [record], encoder.blobs))
    (step,) = protocol.decode_observations(body, "s/c", 1).steps
    assert step.value == (1, 2.5, "x", None, True, EnumValue("StepMode", "CAPTURE"), OpaqueValue("object"))


def test_the_case_message_carries_steps_but_no_checks():
    case, _ = load_case(RUNNER_STEPS, "output: {step: second, equals: {values: [[123.5]]}}\nlaunches: {step: second, equals: 17}")
    message = protocol.case_message(case.uid, case.steps)
    data = json.loads(message)
    assert set(data) == {"protocol", "case", "steps"}
    assert b"123.5" not in message and b"17" not in message and b"equals" not in message
    uid, steps = protocol.read_case_message(message)
    assert uid == case.uid and [s.label for s in steps] == [s.label for s in case.steps]


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
    from grader.judge import describe

    assert describe((1, "a", None, (2.5, True))) == "[1, 'a', None, [2.5, True]]"
    assert describe(tuple(range(20))) == "[0, 1, 2, 3, 4, 5, 6, 7, …]"
    assert describe("z" * 1000) == "'" + "z" * 198 + "…"
    assert len(describe(OpaqueValue("T" * 2000))) == 200


# ------------------------------------------------------------------ values that cannot be copied out
class _Unreadable:
    """A returned object whose array interface raises when the worker copies it out."""

    @property
    def __array_interface__(self):
        raise RuntimeError("no array for you")


def _fake_module(result):
    import types

    module = types.ModuleType("fake_submission")
    module.run_eager = lambda *args, **kwargs: result
    return module


def test_a_returned_value_that_cannot_be_encoded_is_reported_by_its_type():
    from grader.interpreter import CaseInterpreter, observe_in_process
    from grader.spec_model import Step

    steps = (Step(index=0, action="call", target="run_eager", name="out"),)
    (step,) = observe_in_process(_fake_module(_Unreadable()), "s/c", steps).steps
    assert (step.outcome, step.value, step.error) == ("returned", OpaqueValue("_Unreadable"), None)

    def to_host(value):
        raise RuntimeError("device gone")

    (step,) = observe_in_process(_fake_module(np.arange(3)), "s/c", steps, to_host=to_host).steps
    assert (step.outcome, step.value) == ("returned", OpaqueValue("ndarray"))

    # An array copied out before the failing item is not left behind in the frame.
    interpreter = CaseInterpreter(_fake_module([np.arange(3), _Unreadable()]))
    record = interpreter.run_step(steps[0])
    assert record["outcome"] == "returned" and record["value"] == {"object": {"type": "list"}}
    assert interpreter.encoder.blobs == [] and interpreter.encoder.size == 0


# ------------------------------------------------------------------ fused_ops
FUSE_STEPS = """\
          - call: fuse_elementwise
            as: fused
            args: [{ops: [{add: 1.0}, {mul: 2.0}, relu, softmax, tanh]}]
"""
FUSED_CHECK = "fused_ops: {step: fused}"


def fused_verdict(listed):
    return judge(FUSE_STEPS, FUSED_CHECK, [StepObservation(0, "returned", value=None, launches=0, ops=None if listed is None else tuple(ListedOp(*o) for o in listed))])


def test_fused_ops_one_op_per_maximal_run_passes():
    verdict = fused_verdict([(False, -1, -1, True), (True, 0, 3, False), (True, 0, 4, True)])
    assert verdict.status == "passed", verdict.message


@pytest.mark.parametrize(
    ("listed", "message"),
    [
        # pairs: [add, mul] fused, relu left alone
        ([(False, -1, -1, True), (True, 0, 2, True), (True, 0, 3, False), (True, 0, 4, True)], "returned 4 ops, expected 3"),
        # the fused op is not marked elementwise
        ([(False, -1, -1, False), (True, 0, 3, False), (True, 0, 4, True)], "marked elementwise = True"),
        # the lone tanh is wrapped in a new callable
        ([(False, -1, -1, True), (True, 0, 3, False), (False, -1, -1, True)], "very op object"),
        # softmax replaced by a copy
        ([(False, -1, -1, True), (False, -1, -1, False), (True, 0, 4, True)], "op 3 should be kept"),
        (None, "should return a list of ops"),
    ],
)
def test_fused_ops_wrong_structure_fails(listed, message):
    verdict = fused_verdict(listed)
    assert verdict.status == "failed" and message in verdict.message, verdict.message


def test_fused_ops_through_the_worker_interpreter():
    """The interpreter tells the case's own ops from new callables, and reads the elementwise mark."""
    from grader.interpreter import observe_in_process
    from reference.mutants._base import fresh_reference

    case, oracles = load_case(FUSE_STEPS, FUSED_CHECK)
    ref = fresh_reference(__name__)
    observation = observe_in_process(ref, case.uid, case.steps)
    assert [(o.given, o.position, o.elementwise) for o in observation.steps[0].ops] == [(False, -1, True), (True, 3, False), (True, 4, True)]
    assert judge_case(case, oracles, observation).status == "passed"
