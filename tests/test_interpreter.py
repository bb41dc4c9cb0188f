"""The worker's interpreter (grader.observe.interpreter): one case's steps run against a module, and what
it records, decoded as the grader decodes it.

The modules here are stand-ins built in the test (or a fresh copy of the reference), run in
this process through :func:`observe_in_process`: the same code a sandboxed worker runs.
"""

from __future__ import annotations

import types

import numpy as np
from support.spec_text import FUSE_STEPS, FUSED_CHECK, RUNNER_STEPS, load_case

from grader.judging.judge import judge_case
from grader.observations import OpaqueValue
from grader.observe.interpreter import CaseInterpreter, observe_in_process
from grader.spec_model import Step


# ------------------------------------------------------------------ values that cannot be copied out
class _Unreadable:
    """A returned object whose array interface raises when the worker copies it out."""

    @property
    def __array_interface__(self):
        raise RuntimeError("no array for you")


def _fake_module(result):
    module = types.ModuleType("fake_submission")
    module.run_eager = lambda *args, **kwargs: result
    return module


def test_a_returned_value_that_cannot_be_encoded_is_reported_by_its_type():
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
    assert record.outcome == "returned" and record.value == {"object": {"type": "list"}}
    assert interpreter.encoder.blobs == [] and interpreter.encoder.size == 0


# ------------------------------------------------------------------ fused_ops
def test_fused_ops_through_the_worker_interpreter():
    """The interpreter tells the case's own ops from new callables, and reads the elementwise mark."""
    from reference.mutants._base import fresh_reference

    case, oracles = load_case(FUSE_STEPS, FUSED_CHECK)
    ref = fresh_reference(__name__)
    observation = observe_in_process(ref, case.uid, case.steps)
    assert [(o.given, o.position, o.elementwise) for o in observation.steps[0].ops] == [
        (False, -1, True),
        (True, 3, False),
        (True, 4, True),
    ]
    assert judge_case(case, oracles, observation).status == "passed"


# ------------------------------------------------------------------ what each step records
def _module(**names) -> types.ModuleType:
    module = types.ModuleType("stand_in")
    for name, value in names.items():
        setattr(module, name, value)
    return module


def _observe(module, steps=RUNNER_STEPS, checks="launches: {step: second, equals: 1}"):
    case, _ = load_case(steps, checks)
    return observe_in_process(module, case.uid, case.steps).steps


def test_each_step_records_its_value_launches_witness_and_the_callers_input():
    from reference.mutants._base import fresh_reference

    built, first, second = _observe(fresh_reference(__name__))
    assert (built.outcome, built.value, built.launches, built.witness) == (
        "returned",
        OpaqueValue("GraphRunner"),
        0,
        (),
    )
    assert (first.launches, second.launches) == (3, 1)  # capture runs each op once, a replay is one launch
    for step in (first, second):
        assert step.outcome == "returned" and step.error is None
        assert type(step.value) is np.ndarray and step.value.shape == (4, 8) and step.value.dtype == np.float32
        assert step.input_address is not None
        assert [w.position for w in step.witness] == [0, 1, 2]  # each op saw one buffer, in order
    assert not np.array_equal(first.value, second.value)  # seeds 1 and 2: the replay computed anew


def test_a_missing_contract_name_is_recorded_and_what_needed_it_is_not_reached():
    class LaunchCounter:
        n = 0

    built, first, second = _observe(_module(LaunchCounter=LaunchCounter))
    assert (built.outcome, built.note) == ("missing", "GraphRunner")
    for step in (first, second):
        assert step.outcome == "not_reached" and "runner was not produced by its step" in step.note
        assert step.value is None and step.launches is None


def test_a_step_that_raises_records_type_and_message_and_later_steps_still_run():
    import sys

    class GraphRunner:
        calls = 0

        def __init__(self, ops):
            self.ops = ops

        def __call__(self, x):
            GraphRunner.calls += 1
            if GraphRunner.calls == 1:
                raise ValueError("first call refused")
            sys.exit(3)  # a step's own failure, never the worker's

    built, first, second = _observe(_module(GraphRunner=GraphRunner))
    assert built.outcome == "returned" and built.launches is None  # no LaunchCounter: no count, no crash
    assert first.outcome == "raised" and (first.error.type, first.error.message) == ("ValueError", "first call refused")
    assert second.outcome == "raised" and second.error.type == "SystemExit"
