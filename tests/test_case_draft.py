"""Unit tests of ``grader.suite.case_draft``: a case between parse and link. The lab's padding rule,
what is known statically about each bound name, implicit reads laid out right after their
anchor, step lookups that fail with ``file:line``, and the calls the judge computes itself."""

from __future__ import annotations

import pytest
import yaml

from grader.spec_model import ArrayValue, OpSpec, OpsValue, PlainValue, RefValue
from grader.suite.case_draft import CaseDraft, DraftStep, padded_shape
from grader.suite.spec_reading import NodeReader, SpecError


@pytest.mark.parametrize(
    "shape, sizes, padded",
    [
        ((3, 8), (1, 2, 4, 8), (4, 8)),
        ((4, 8), (8, 4, 1), (4, 8)),  # an exact fit; sizes in any order
        ((9, 8), (1, 2, 4, 8), (9, 8)),  # larger than every size: not padded
        ((3, 8), None, (3, 8)),
        ((3, 8), (), (3, 8)),
        ((), (4,), ()),
    ],
)
def test_a_batch_pads_up_to_the_smallest_capture_size_that_holds_it(shape, sizes, padded):
    assert padded_shape(shape, sizes) == padded


def test_draft_step_arguments_by_keyword_before_position():
    step = DraftStep(key=0, action="call", line=1, position=0, args=[PlainValue(1), PlainValue(2)])
    assert step.arg(1, "x") == PlainValue(2)
    step.kwargs["x"] = PlainValue(9)
    assert step.arg(1, "x") == PlainValue(9)
    assert step.arg(5, "y") is None


def _draft() -> tuple[CaseDraft, OpsValue, ArrayValue]:
    """``runner = GraphRunner([relu, {add: 1}], capture_sizes=[2, 4])``, ``out = runner(x)``,
    ``again = run_eager(ops, out)``."""
    draft = CaseDraft(NodeReader("specs/x.yaml"))
    ops = OpsValue((OpSpec("relu"), OpSpec("add", 1)))
    x = ArrayValue("float32", (3, 8), seed=1)
    draft.number_lists([ops])
    build = draft.new_step("build", 5, 0)
    build.target, build.name, build.args = "GraphRunner", "runner", [ops, PlainValue((2, 4))]
    draft.add(build)
    call = draft.new_step("call", 6, 1)
    call.target, call.name, call.args = "runner", "out", [x]
    draft.add(call)
    eager = draft.new_step("call", 7, 2)
    eager.target, eager.name, eager.args = "run_eager", "again", [RefValue("runner"), RefValue("out")]
    draft.add(eager)
    return draft, ops, x


def test_a_runner_built_from_a_literal_list_knows_its_chain_and_sizes():
    draft, ops, x = _draft()
    runner = draft.bound["runner"]
    assert (runner.kind, runner.chain, runner.list_id, runner.capture_sizes, runner.cls) == (
        "runner",
        ops.chain,
        0,
        (2, 4),
        "GraphRunner",
    )
    out = draft.bound["out"]
    assert (out.kind, out.chain, out.input) == ("result", ops.chain, x)
    assert draft.literal_op_count("runner") == 2


def test_an_input_that_is_an_earlier_oracle_result_is_known_too():
    draft, ops, _ = _draft()
    again = draft.bound["again"]
    assert again.input == RefValue("out")


def test_implicit_reads_follow_their_anchor_and_the_rest_go_last():
    draft, _, _ = _draft()
    after_build = draft.read_after(yaml.compose("runner"), "checks[0]", "read", "num_captured", "runner")
    at_end = draft.read_after(None, "checks[1]", "read", "num_captured", "runner")
    steps, index_of = draft.layout()
    assert [s.action for s in steps] == ["build", "read", "call", "call", "read"]
    assert index_of[after_build.key] == 1 and index_of[at_end.key] == 4
    assert steps[1].implicit and steps[1].name == "_check1" and steps[1].on == "runner"
    assert [s.index for s in steps] == list(range(5))


def test_the_judge_computes_the_calls_with_a_known_chain_and_input():
    draft, ops, x = _draft()
    _, index_of = draft.layout()
    calls = draft.oracle_calls(index_of)
    assert [(c.step, c.chain, c.input) for c in calls] == [(1, ops.chain, x), (2, ops.chain, RefValue("out"))]


def test_a_check_naming_a_missing_or_wrong_step_fails_at_its_line():
    draft, _, _ = _draft()
    node = yaml.compose("\n\nnobody")
    with pytest.raises(SpecError, match=r"^specs/x.yaml:3: checks\[0\].step: no step is named 'nobody'$"):
        draft.step(node, "checks[0].step")
    with pytest.raises(SpecError, match="step 'runner' is a build step; this check needs a call step"):
        draft.step(yaml.compose("runner"), "checks[0].step", ("call",))
    assert draft.step(yaml.compose("out"), "checks[0].step", ("call",)).name == "out"
