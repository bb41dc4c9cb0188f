"""The ``same_output`` check kind: loading, schema and judging, end to end through a real submission."""

from __future__ import annotations

import types

import jsonschema
import pytest
import yaml

import reference.cudagraph as reference
from grader.judging.judge import judge_case
from grader.observe.interpreter import observe_in_process
from grader.suite.checks import check_class, lab_check_kinds
from grader.suite.loader import SpecError, load_spec_text
from grader.suite.schema import build_schema

SPEC = """\
format: 1
specs:
  - id: fused
    title: A fused runner
    tag: fusion
    points: 1
    visibility: visible
    explanation: Explains the behaviour.
    hint: Points at the code.
    cases:
      - id: same
        description: A runner built from the fused list returns what the eager run returns.
        steps:
          - call: run_eager
            as: eager
            args: [{ops: [relu, {add: 1.5}, tanh, {mul: 2.0}]}, {array: {shape: [4, 3], seed: 7}}]
          - call: fuse_elementwise
            as: fused
            args: [{ops: [relu, {add: 1.5}, tanh, {mul: 2.0}]}]
          - build: GraphRunner
            as: runner
            args: [{ref: fused}]
          - call: runner
            as: captured
            args: [{array: {shape: [4, 3], seed: 7}}]
          - call: runner
            as: replayed
            args: [{array: {shape: [4, 3], seed: 7}}]
        checks:
          - same_output: {steps: [eager, captured, replayed]}
"""
CHECK_LINE = SPEC.splitlines().index("          - same_output: {steps: [eager, captured, replayed]}") + 1


def load(text: str = SPEC):
    oracles: dict = {}
    case = load_spec_text(text, "fused.yaml", oracles).specs[0].cases[0]
    return case, oracles[case.uid]


def grade(module, text: str = SPEC):
    case, oracles = load(text)
    return judge_case(case, oracles, observe_in_process(module, case.uid, case.steps))


def submission(**replaced) -> types.ModuleType:
    """The reference with some contract functions replaced (public names only)."""
    module = types.ModuleType("cudagraph")
    module.__dict__.update({k: v for k, v in vars(reference).items() if not k.startswith("__")})
    module.__dict__.update(replaced)
    return module


def test_the_loader_links_the_listed_steps_to_their_indices():
    case, _ = load()
    (check,) = case.checks
    assert isinstance(check, check_class("same_output"))
    assert [case.steps[i].name for i in check.steps] == ["eager", "captured", "replayed"]
    assert check.looks_at() == check.steps


def test_the_kind_is_registered_and_in_the_schema():
    assert "same_output" in lab_check_kinds()
    schema = build_schema()
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors(yaml.safe_load(SPEC))) == []
    bad = yaml.safe_load(SPEC.replace("steps: [eager, captured, replayed]", "steps: [eager]"))
    assert list(validator.iter_errors(bad)), "one step is not enough for the schema either"


def test_the_reference_passes():
    verdict = grade(reference)
    assert verdict.status == "passed", verdict.message
    assert [line.passed for line in verdict.checks] == [True, True]


def test_a_fusion_that_drops_an_op_fails_with_where_the_arrays_differ():
    def drops_last(ops):
        return reference.fuse_elementwise(ops[:-1])

    verdict = grade(submission(fuse_elementwise=drops_last))
    assert verdict.status == "failed"
    assert verdict.message.startswith(
        "Step 4 (captured = runner(float32[4, 3] seed 7)): returned a different array than step 1: at index"
    )
    assert "values differ" in verdict.message
    assert verdict.line == CHECK_LINE  # the check's own line


def test_a_first_step_that_returns_no_array_is_said_so():
    def eager_returns_none(ops, x):
        return None

    verdict = grade(submission(run_eager=eager_returns_none))
    assert verdict.status == "failed"
    assert "returned None, so there is no array to compare the other steps with." in verdict.message


def test_a_step_that_raised_stops_the_check_with_one_line_naming_it():
    def broken(ops):
        raise RuntimeError("boom")

    verdict = grade(submission(fuse_elementwise=broken))
    assert verdict.status == "failed"
    assert "raised RuntimeError: boom" in verdict.message
    assert not any("same array" in line.what for line in verdict.checks)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        (
            "[eager]",
            f"fused.yaml:{CHECK_LINE}: specs[0].cases[0].checks[0].same_output.steps: expected at least 2 items",
        ),
        (
            "[eager, eager]",
            f"fused.yaml:{CHECK_LINE}: specs[0].cases[0].checks[0].same_output.steps[1]: step 'eager' is listed twice",
        ),
        (
            "[eager, runner]",
            f"fused.yaml:{CHECK_LINE}: specs[0].cases[0].checks[0].same_output.steps[1]: step 'runner' is a build step; this check needs a call or method step",
        ),
        (
            "[eager, nowhere]",
            f"fused.yaml:{CHECK_LINE}: specs[0].cases[0].checks[0].same_output.steps[1]: no step is named 'nowhere'",
        ),
    ],
)
def test_bad_step_lists_are_one_line_errors_naming_file_and_line(steps, message):
    with pytest.raises(SpecError) as error:
        load(SPEC.replace("[eager, captured, replayed]", steps))
    assert str(error.value) == message
