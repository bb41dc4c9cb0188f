"""A message names the cause, not the check that saw it first.

Each test edits one realistic mistake into the reference, grades the case where that mistake shows
first through some other rule, and asserts the message says the real fault and not the rule of
the check that tripped (no "pad the batch" for ops handed the caller's array, no "capture runs
each op once" for a call that is eager by design).
"""

from __future__ import annotations

import sys
import types

import pytest
from support.shipped import shipped_suite

from grader.judging.judge import judge_case
from grader.observe.interpreter import observe_in_process
from reference.mutants._base import run_edited_reference

LOADED = shipped_suite()
CASES = {case.uid: case for case in LOADED.suite.cases}


def _edited(*edits: tuple[str, str]) -> types.ModuleType:
    module = types.ModuleType(f"edited_cudagraph_{abs(hash(edits))}")
    sys.modules[module.__name__] = module  # dataclasses look their module up while the class is built
    run_edited_reference(module.__dict__, edits)
    return module


def _message(module: types.ModuleType, uid: str) -> str:
    case = CASES[uid]
    verdict = judge_case(case, LOADED.oracles[uid], observe_in_process(module, uid, case.steps))
    assert verdict.status == "failed", f"{uid} passed the edited reference"
    return verdict.message


REPLAY_ON_CALLERS_ARRAY = ("        y = entry.static_input\n", "        y = x\n")
EAGER_SEGMENTS_SKIPPED = (
    "x = run_eager(seg_ops, x) if runner is None else runner(x)",
    "x = x if runner is None else runner(x)",
)
OVERSIZE_CAPTURED = (
    "                return size\n        return None\n",
    "                return size\n        return n\n",
)
CAPTURE_ON_CALLERS_ARRAY = ("output = run_eager(self.ops, static_input)", "output = run_eager(self.ops, x)")
WARM_UP_IGNORED = ("if done < self.warmup_steps:", "if False:")


def test_a_padded_replay_on_the_callers_array_is_not_told_to_pad():
    message = _message(_edited(REPLAY_ON_CALLERS_ARRAY), "padding-basics/padded-rows-zeroed")
    assert "caller's own array" in message and "static" in message
    assert "pad the batch" not in message


def test_a_piecewise_run_that_skips_its_eager_segment_is_told_so_not_about_capture():
    message = _message(_edited(EAGER_SEGMENTS_SKIPPED), "piecewise-basics/nothing-capturable")
    assert "not capturable and never ran" in message and "run_eager" in message
    assert "Capture runs each op once" not in message


def test_a_mixed_piecewise_run_that_skips_attention_names_the_skipped_op():
    message = _message(_edited(EAGER_SEGMENTS_SKIPPED), "piecewise-basics/attention-in-the-middle")
    assert "never ran during this call" in message
    assert "Capture runs each op once" not in message


def test_a_batch_above_every_capture_size_is_eager_not_a_capture_or_a_replay():
    message = _message(_edited(OVERSIZE_CAPTURED), "padding-basics/above-largest-runs-eagerly")
    assert "above every capture size" in message
    assert "Capture runs each op once" not in message and "A replay is one graph launch" not in message


def test_a_warm_up_call_is_named_a_warm_up_call():
    message = _message(_edited(WARM_UP_IGNORED), "warmup-basics/two-warmup-calls")
    assert message.startswith("Step 3") and "warm-up call" in message
    assert "replay" not in message.lower()


def test_ops_on_the_callers_array_at_capture_are_blamed_on_the_capture():
    message = _message(_edited(CAPTURE_ON_CALLERS_ARRAY), "static-buffer-basics/first-op-sees-static-buffer")
    assert "at capture" in message and "caller's array" in message
    assert message.startswith("Step 2")


@pytest.mark.parametrize(
    ("uid", "kinds"),
    [
        ("shape-cache-basics/new-shape-new-graph", ["capture", "capture"]),
        ("padding-edge/five-and-seven-share-eight", ["capture", "replay"]),
        ("padding-basics/above-largest-runs-eagerly", ["oversize"]),
        ("piecewise-basics/nothing-capturable", ["uncapturable"]),
        ("piecewise-basics/attention-in-the-middle", ["piecewise-capture", "piecewise-replay"]),
        ("warmup-basics/two-warmup-calls", ["warmup", "warmup", "capture", "replay"]),
    ],
)
def test_step_kinds_follow_keys_capture_sizes_warm_up_and_masks(uid, kinds):
    from grader.lab import active
    from grader.lab.loading import pack_attribute

    step_kind = pack_attribute(active(), "pack.checks.runner_steps:step_kind")  # the lab's own vocabulary

    case = CASES[uid]
    runner_calls = [
        i
        for i, s in enumerate(case.steps)
        if s.action == "call" and s.target not in ("run_eager", "fuse_elementwise") and not s.implicit
    ]
    assert [step_kind(case, i) for i in runner_calls][: len(kinds)] == kinds


STALE_REPLAY = (
    "        y = entry.static_input\n        for op in self.ops:\n            y = op(y)\n",
    "        y = entry.output\n",
)
PADDED_ROWS_RETURNED = (
    "        return np.array(output[: x.shape[0]], copy=True)",
    "        return np.array(output, copy=True)",
)


def test_a_stale_replay_is_told_it_returned_an_earlier_result():
    message = _message(_edited(STALE_REPLAY), "replay-basics/replay-computes-new-input")
    assert "wrong output" in message and "the result for the input of step 2" in message


def test_returned_padded_rows_are_named_as_such():
    message = _message(_edited(PADDED_ROWS_RETURNED), "padding-basics/round-up")
    assert "padded rows came back too" in message and "real rows" in message
