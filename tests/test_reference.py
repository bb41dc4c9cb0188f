"""Pins every rule of the student contract (docs/contract.md) on the reference.

One class per behaviour tag. Each test would fail if its rule were broken.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import numpy as np
import pytest

from reference import (
    GraphEntry,
    GraphRunner,
    InferenceGraphCapture,
    LaunchCounter,
    PiecewiseGraphRunner,
    StepMode,
    fuse_elementwise,
    run_eager,
)


class Recorder:
    """An op that applies ``fn`` and remembers what it was handed."""

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray], elementwise: bool = False) -> None:
        self.fn = fn
        self.elementwise = elementwise
        self.seen: list[np.ndarray] = []  # the very objects passed in
        self.snapshots: list[np.ndarray] = []  # their contents at call time

    def __call__(self, x: np.ndarray) -> np.ndarray:
        self.seen.append(x)
        self.snapshots.append(np.array(x, copy=True))
        return self.fn(x)

    @property
    def calls(self) -> int:
        return len(self.seen)


def add(k: float, elementwise: bool = True) -> Recorder:
    return Recorder(lambda x: x + k, elementwise)


def mul(k: float, elementwise: bool = True) -> Recorder:
    return Recorder(lambda x: x * k, elementwise)


def mix_rows() -> Recorder:
    """Not row-wise: every row sees the column sums, padded rows included."""
    return Recorder(lambda x: x + x.sum(axis=0, keepdims=True))


def chain() -> list[Recorder]:
    """Three order-sensitive ops: ((x + 1) * 2) - 3."""
    return [add(1), mul(2), add(-3)]


def reference_result(ops: list[Recorder], x: np.ndarray) -> np.ndarray:
    """What the ops compute, without touching the launch counter."""
    for op in ops:
        x = op.fn(x)
    return x


def batch(n: int, width: int = 3, start: float = 0.0) -> np.ndarray:
    return np.arange(n * width, dtype=np.float64).reshape(n, width) + start


def launches(fn: Callable[[], object]) -> int:
    before = LaunchCounter.n
    fn()
    return LaunchCounter.n - before


@pytest.fixture(autouse=True)
def fresh_counter() -> None:
    LaunchCounter.reset()


class TestLaunchCounter:
    def test_bump_defaults_to_one(self) -> None:
        LaunchCounter.bump()
        assert LaunchCounter.n == 1

    def test_bump_adds_k(self) -> None:
        LaunchCounter.bump(4)
        LaunchCounter.bump(3)
        assert LaunchCounter.n == 7

    def test_reset_returns_to_zero(self) -> None:
        LaunchCounter.bump(5)
        LaunchCounter.reset()
        assert LaunchCounter.n == 0

    def test_count_is_class_level(self) -> None:
        LaunchCounter().bump(2)
        assert LaunchCounter.n == 2
        assert LaunchCounter().n == 2


class TestEager:
    def test_applies_ops_in_order(self) -> None:
        x = np.array([1.0, 2.0])
        np.testing.assert_array_equal(run_eager([add(1), mul(2)], x), [4.0, 6.0])
        np.testing.assert_array_equal(run_eager([mul(2), add(1)], x), [3.0, 5.0])

    @pytest.mark.parametrize("num_ops", [1, 2, 5])
    def test_one_launch_per_op(self, num_ops: int) -> None:
        ops = [add(1) for _ in range(num_ops)]
        assert launches(lambda: run_eager(ops, np.zeros(2))) == num_ops

    def test_pays_again_on_every_call(self) -> None:
        ops = chain()
        for _ in range(3):
            run_eager(ops, np.zeros(2))
        assert LaunchCounter.n == 9

    def test_no_ops_costs_nothing(self) -> None:
        x = np.ones(3)
        np.testing.assert_array_equal(run_eager([], x), x)
        assert LaunchCounter.n == 0

    def test_each_op_receives_previous_result(self) -> None:
        first, second = add(1), mul(2)
        run_eager([first, second], np.array([5.0]))
        np.testing.assert_array_equal(second.snapshots[0], [6.0])


class TestShapeCache:
    def test_first_call_captures_an_entry(self) -> None:
        ops = chain()
        runner = GraphRunner(ops)
        x = batch(2)
        out = runner(x)
        assert runner.num_captured == 1
        (entry,) = runner.graphs.values()
        assert isinstance(entry, GraphEntry)
        assert tuple(entry.shape) == (2, 3)
        assert entry.num_ops == 3
        np.testing.assert_array_equal(out, reference_result(ops, x))
        np.testing.assert_array_equal(entry.output, reference_result(ops, x))

    def test_capture_costs_one_launch_per_op(self) -> None:
        runner = GraphRunner(chain())
        assert launches(lambda: runner(batch(2))) == 3

    def test_same_shape_is_not_captured_again(self) -> None:
        runner = GraphRunner(chain())
        for start in range(4):
            runner(batch(2, start=start))
        assert runner.num_captured == 1

    def test_each_new_shape_gets_its_own_graph(self) -> None:
        runner = GraphRunner(chain())
        runner(batch(2))
        runner(batch(3))
        runner(np.zeros(4))
        assert runner.num_captured == 3
        shapes = {tuple(entry.shape) for entry in runner.graphs.values()}
        assert shapes == {(2, 3), (3, 3), (4,)}

    def test_returning_to_a_seen_shape_replays(self) -> None:
        runner = GraphRunner(chain())
        runner(batch(2))
        runner(batch(3))
        assert launches(lambda: runner(batch(2, start=9))) == 1
        assert runner.num_captured == 2

    def test_replay_computes_the_new_input(self) -> None:
        ops = chain()
        runner = GraphRunner(ops)
        runner(batch(2))
        x = batch(2, start=100)
        out = runner(x)
        np.testing.assert_array_equal(out, reference_result(ops, x))
        (entry,) = runner.graphs.values()
        np.testing.assert_array_equal(entry.output, reference_result(ops, x))


class TestStaticBuffer:
    def test_capture_copies_into_a_new_buffer(self) -> None:
        first = add(1)
        runner = GraphRunner([first, mul(2)])
        x = batch(2)
        runner(x)
        (entry,) = runner.graphs.values()
        assert entry.static_input is not x
        assert first.seen[0] is entry.static_input
        np.testing.assert_array_equal(entry.static_input, x)

    def test_replay_reuses_the_same_buffer_with_latest_input(self) -> None:
        runner = GraphRunner(chain())
        runner(batch(2))
        (entry,) = runner.graphs.values()
        buffer = entry.static_input
        for start in (10.0, 20.0, 30.0):
            x = batch(2, start=start)
            runner(x)
            (entry,) = runner.graphs.values()
            assert entry.static_input is buffer
            np.testing.assert_array_equal(buffer, x)

    def test_first_op_receives_the_static_buffer_on_replay(self) -> None:
        first = add(1)
        runner = GraphRunner([first, mul(2)])
        runner(batch(2))
        x = batch(2, start=7)
        runner(x)
        (entry,) = runner.graphs.values()
        assert first.seen[-1] is entry.static_input
        assert first.seen[-1] is not x
        np.testing.assert_array_equal(first.snapshots[-1], x)

    def test_mutating_a_returned_array_does_not_break_replay(self) -> None:
        ops = chain()
        runner = GraphRunner(ops)
        out = runner(batch(2))
        out[...] = -999.0
        out = runner(batch(2, start=1))
        out[...] = -999.0
        x = batch(2, start=2)
        np.testing.assert_array_equal(runner(x), reference_result(ops, x))

    def test_mutating_the_input_after_the_call_does_not_leak(self) -> None:
        ops = chain()
        runner = GraphRunner(ops)
        x = batch(2)
        runner(x)
        x[...] = 555.0
        y = batch(2, start=3)
        np.testing.assert_array_equal(runner(y), reference_result(ops, y))

    def test_identity_ops_still_see_fresh_input(self) -> None:
        runner = GraphRunner([Recorder(lambda x: x)])
        runner(batch(2))
        x = batch(2, start=4)
        np.testing.assert_array_equal(runner(x), x)


class TestSingleLaunchReplay:
    @pytest.mark.parametrize("num_ops", [1, 3, 6])
    def test_replay_costs_one_launch(self, num_ops: int) -> None:
        runner = GraphRunner([add(1) for _ in range(num_ops)])
        runner(batch(2))
        assert launches(lambda: runner(batch(2, start=1))) == 1

    def test_many_replays_cost_one_each(self) -> None:
        runner = GraphRunner(chain())
        runner(batch(2))
        assert launches(lambda: [runner(batch(2, start=s)) for s in range(5)]) == 5

    def test_replay_still_runs_every_op(self) -> None:
        ops = chain()
        runner = GraphRunner(ops)
        runner(batch(2))
        runner(batch(2, start=1))
        assert [op.calls for op in ops] == [2, 2, 2]


class TestPiecewise:
    def test_split_at_the_middle_gives_two_graphs(self) -> None:
        ops = chain()
        runner = PiecewiseGraphRunner(ops, lambda i: i != 1)
        assert runner.num_graphs == 2

    def test_replay_costs_one_launch_per_piece(self) -> None:
        ops = chain()
        runner = PiecewiseGraphRunner(ops, lambda i: i != 1)
        assert launches(lambda: runner(batch(2))) == 3
        assert launches(lambda: runner(batch(2, start=1))) == 3

    def test_output_matches_eager(self) -> None:
        ops = chain()
        runner = PiecewiseGraphRunner(ops, lambda i: i != 1)
        for start in (0.0, 5.0):
            x = batch(2, start=start)
            np.testing.assert_array_equal(runner(x), reference_result(ops, x))

    def test_consecutive_ops_share_a_segment(self) -> None:
        ops = [add(1), mul(2), add(3), mul(4), add(5)]
        pattern = [True, True, False, False, True]
        runner = PiecewiseGraphRunner(ops, lambda i: pattern[i])
        assert runner.num_graphs == 2
        runner(batch(2))
        assert launches(lambda: runner(batch(2, start=1))) == 1 + 2 + 1

    def test_all_capturable_is_one_graph(self) -> None:
        runner = PiecewiseGraphRunner(chain(), lambda i: True)
        assert runner.num_graphs == 1
        runner(batch(2))
        assert launches(lambda: runner(batch(2))) == 1

    def test_nothing_capturable_runs_eagerly(self) -> None:
        runner = PiecewiseGraphRunner(chain(), lambda i: False)
        assert runner.num_graphs == 0
        runner(batch(2))
        assert launches(lambda: runner(batch(2))) == 3

    def test_is_capturable_is_asked_by_op_index(self) -> None:
        asked: list[int] = []

        def is_capturable(i: int) -> bool:
            asked.append(i)
            return True

        PiecewiseGraphRunner(chain() + [add(4)], is_capturable)
        assert sorted(set(asked)) == [0, 1, 2, 3]

    def test_captured_pieces_use_static_buffers(self) -> None:
        ops = chain()
        runner = PiecewiseGraphRunner(ops, lambda i: i != 1)
        runner(batch(2))
        runner(batch(2, start=1))
        runner(batch(2, start=2))
        assert ops[0].seen[1] is ops[0].seen[2]
        assert ops[2].seen[1] is ops[2].seen[2]

    def test_capture_sizes_reach_the_captured_pieces(self) -> None:
        ops = chain()
        runner = PiecewiseGraphRunner(ops, lambda i: i != 1, capture_sizes=[4])
        x = batch(3)
        out = runner(x)
        assert ops[0].seen[0].shape == (4, 3)
        np.testing.assert_array_equal(out, reference_result(ops, x))


class TestPadding:
    SIZES = [1, 2, 4, 8]

    def test_batches_5_and_7_share_the_size_8_graph(self) -> None:
        runner = GraphRunner(chain(), capture_sizes=self.SIZES)
        runner(batch(5))
        assert launches(lambda: runner(batch(7))) == 1
        assert runner.num_captured == 1
        (entry,) = runner.graphs.values()
        assert tuple(entry.shape) == (8, 3)
        assert entry.static_input.shape == (8, 3)

    def test_batches_1_to_8_capture_four_graphs(self) -> None:
        runner = GraphRunner(chain(), capture_sizes=self.SIZES)
        for n in range(1, 9):
            runner(batch(n))
        assert runner.num_captured == 4
        assert sorted(entry.shape[0] for entry in runner.graphs.values()) == self.SIZES

    def test_without_padding_batches_1_to_8_capture_eight(self) -> None:
        runner = GraphRunner(chain())
        for n in range(1, 9):
            runner(batch(n))
        assert runner.num_captured == 8

    def test_only_real_rows_are_returned(self) -> None:
        ops = chain()
        runner = GraphRunner(ops, capture_sizes=self.SIZES)
        for n in (5, 6, 3):
            x = batch(n, start=n)
            out = runner(x)
            assert out.shape == (n, 3)
            np.testing.assert_array_equal(out, reference_result(ops, x))

    def test_padded_rows_are_zero_at_capture(self) -> None:
        first = add(1)
        runner = GraphRunner([first], capture_sizes=self.SIZES)
        x = batch(5, start=1)
        runner(x)
        np.testing.assert_array_equal(first.snapshots[0][:5], x)
        np.testing.assert_array_equal(first.snapshots[0][5:], np.zeros((3, 3)))

    def test_padded_rows_are_zeroed_on_every_replay(self) -> None:
        first = add(1)
        runner = GraphRunner([first], capture_sizes=self.SIZES)
        runner(batch(7, start=100))
        runner(batch(5, start=1))
        np.testing.assert_array_equal(first.snapshots[-1][5:], np.zeros((3, 3)))

    def test_real_rows_are_not_polluted_by_a_larger_batch(self) -> None:
        ops = [mix_rows()]
        runner = GraphRunner(ops, capture_sizes=self.SIZES)
        runner(batch(7, start=1000))
        x = batch(5)
        np.testing.assert_array_equal(runner(x), reference_result(ops, x))

    def test_batch_above_largest_size_runs_eagerly_forever(self) -> None:
        ops = chain()
        runner = GraphRunner(ops, capture_sizes=self.SIZES)
        for start in range(3):
            x = batch(9, start=start)
            assert launches(lambda: runner(x)) == 3
            np.testing.assert_array_equal(runner(x), reference_result(ops, x))
        assert runner.num_captured == 0
        assert runner.graphs == {}

    def test_exact_size_is_its_own_key(self) -> None:
        runner = GraphRunner(chain(), capture_sizes=self.SIZES)
        runner(batch(4))
        assert [tuple(e.shape) for e in runner.graphs.values()] == [(4, 3)]

    def test_unsorted_sizes_pick_the_smallest_that_fits(self) -> None:
        runner = GraphRunner(chain(), capture_sizes=[8, 1, 4, 2])
        runner(batch(3))
        assert [tuple(e.shape) for e in runner.graphs.values()] == [(4, 3)]

    def test_zero_dim_input_is_not_padded(self) -> None:
        ops = chain()
        runner = GraphRunner(ops, capture_sizes=self.SIZES)
        runner(np.float64(2.0))
        out = runner(np.array(5.0))
        assert runner.num_captured == 1
        np.testing.assert_array_equal(out, reference_result(ops, np.array(5.0)))


class TestWarmup:
    def test_first_n_calls_run_eagerly_then_capture_then_replay(self) -> None:
        runner = GraphRunner(chain(), warmup_steps=2)
        costs = [launches(lambda: runner(batch(2))) for _ in range(2)]
        assert costs == [3, 3]
        assert runner.num_captured == 0
        assert launches(lambda: runner(batch(2))) == 3
        assert runner.num_captured == 1
        assert launches(lambda: runner(batch(2))) == 1

    def test_warmup_outputs_are_correct(self) -> None:
        ops = chain()
        runner = GraphRunner(ops, warmup_steps=2)
        for start in range(4):
            x = batch(2, start=start)
            np.testing.assert_array_equal(runner(x), reference_result(ops, x))

    def test_warmup_counts_per_key(self) -> None:
        runner = GraphRunner(chain(), warmup_steps=1)
        runner(batch(2))
        runner(batch(2))
        assert runner.num_captured == 1
        assert launches(lambda: runner(batch(3))) == 3
        assert runner.num_captured == 1
        runner(batch(3))
        assert runner.num_captured == 2

    def test_warmup_counts_per_padded_key(self) -> None:
        runner = GraphRunner(chain(), capture_sizes=[1, 2, 4, 8], warmup_steps=1)
        runner(batch(5))
        assert runner.num_captured == 0
        runner(batch(7))
        assert runner.num_captured == 1

    def test_default_captures_on_first_call(self) -> None:
        runner = GraphRunner(chain())
        runner(batch(2))
        assert runner.num_captured == 1


class TestFusion:
    def test_no_elementwise_ops_are_left_alone(self) -> None:
        ops = [add(1, elementwise=False), mul(2, elementwise=False)]
        fused = fuse_elementwise(ops)
        assert len(fused) == 2
        assert all(a is b for a, b in zip(fused, ops))

    def test_a_run_of_one_is_untouched(self) -> None:
        ops = [add(1), mul(2, elementwise=False), add(3)]
        fused = fuse_elementwise(ops)
        assert len(fused) == 3
        assert all(a is b for a, b in zip(fused, ops))

    def test_a_run_of_two_becomes_one_elementwise_op(self) -> None:
        ops = [add(1), mul(2), add(5, elementwise=False)]
        fused = fuse_elementwise(ops)
        assert len(fused) == 2
        assert fused[0] not in ops
        assert getattr(fused[0], "elementwise", False) is True
        assert fused[1] is ops[2]

    def test_a_run_of_three_becomes_one_op(self) -> None:
        ops = [mul(3, elementwise=False), add(1), mul(2), add(-3)]
        fused = fuse_elementwise(ops)
        assert len(fused) == 2
        assert fused[0] is ops[0]

    def test_separate_runs_fuse_separately(self) -> None:
        ops = [add(1), mul(2), add(0, elementwise=False), mul(3), add(4), mul(5)]
        assert len(fuse_elementwise(ops)) == 3

    def test_fused_op_keeps_the_order(self) -> None:
        (fused,) = fuse_elementwise([add(1), mul(2)])
        np.testing.assert_array_equal(fused(np.array([1.0, 2.0])), [4.0, 6.0])

    def test_elementwise_false_is_not_elementwise(self) -> None:
        ops = [Recorder(lambda x: x + 1, elementwise=False), add(2)]
        assert len(fuse_elementwise(ops)) == 2

    def test_the_input_list_is_not_changed(self) -> None:
        ops = chain()
        before = list(ops)
        fuse_elementwise(ops)
        assert ops == before

    @pytest.mark.parametrize(
        "flags, expected_launches",
        [
            ([False, False, False], 3),  # no run
            ([True, False, True], 3),  # runs of length 1
            ([True, True, False], 2),  # a run of 2
            ([True, True, True], 1),  # a run of 3
        ],
    )
    def test_fusion_cuts_eager_launches_and_keeps_outputs(self, flags: list[bool], expected_launches: int) -> None:
        ops = [add(1, flags[0]), mul(2, flags[1]), add(-3, flags[2])]
        x = batch(2)
        expected = run_eager(ops, x)
        fused = fuse_elementwise(ops)
        LaunchCounter.reset()
        np.testing.assert_array_equal(run_eager(fused, x), expected)
        assert LaunchCounter.n == expected_launches

    def test_fusion_also_cuts_capture_cost(self) -> None:
        runner = GraphRunner(fuse_elementwise(chain()))
        assert launches(lambda: runner(batch(2))) == 1


def advanced(machine: InferenceGraphCapture, steps: int) -> InferenceGraphCapture:
    for _ in range(steps):
        machine.advance()
    return machine


class TestStateMachine:
    def test_step_mode_is_an_enum_of_three(self) -> None:
        assert issubclass(StepMode, enum.Enum)
        assert [m.name for m in StepMode] == ["WARMUP", "CAPTURE", "REPLAY"]

    def test_disabled_by_default_always_warms_up(self) -> None:
        machine = InferenceGraphCapture(1)
        for _ in range(5):
            assert machine.step_mode() is StepMode.WARMUP
            machine.advance()

    def test_disabled_even_after_a_recorded_capture(self) -> None:
        machine = advanced(InferenceGraphCapture(1), 1)
        machine.record_capture(3, 4, 0)
        machine.advance()
        assert machine.step_mode() is StepMode.WARMUP

    def test_warmup_then_capture_then_replay(self) -> None:
        machine = InferenceGraphCapture(2, enabled=True)
        modes = []
        for _ in range(5):
            mode = machine.step_mode()
            modes.append(mode)
            if mode is StepMode.CAPTURE:
                machine.record_capture(7, 4, machine.step_count)
            machine.advance()
        assert modes == [
            StepMode.WARMUP,
            StepMode.WARMUP,
            StepMode.CAPTURE,
            StepMode.REPLAY,
            StepMode.REPLAY,
        ]

    @pytest.mark.parametrize("warmup", [0, -3])
    def test_warmup_below_one_is_raised_to_one(self, warmup: int) -> None:
        machine = InferenceGraphCapture(warmup, enabled=True)
        assert machine.step_mode() is StepMode.WARMUP
        machine.advance()
        assert machine.step_mode() is StepMode.CAPTURE

    def test_capture_happens_only_once(self) -> None:
        machine = advanced(InferenceGraphCapture(1, enabled=True), 1)
        assert machine.step_mode() is StepMode.CAPTURE
        machine.record_capture(1, 2, 1)
        assert machine.step_mode() is StepMode.REPLAY

    def test_attempted_but_not_recorded_goes_to_replay(self) -> None:
        machine = advanced(InferenceGraphCapture(2, enabled=True), 2)
        machine.capture_attempted = True
        assert machine.step_mode() is StepMode.REPLAY
        assert machine.is_captured is False

    def test_a_skipped_capture_window_is_replay(self) -> None:
        machine = advanced(InferenceGraphCapture(1, enabled=True), 2)
        assert machine.step_mode() is StepMode.REPLAY
        assert machine.is_captured is False

    def test_advance_counts_steps(self) -> None:
        machine = InferenceGraphCapture(3)
        assert machine.step_count == 0
        advanced(machine, 4)
        assert machine.step_count == 4

    def test_step_count_and_is_captured_are_read_only(self) -> None:
        machine = InferenceGraphCapture(1)
        with pytest.raises(AttributeError):
            machine.step_count = 9  # type: ignore[misc]
        with pytest.raises(AttributeError):
            machine.is_captured = True  # type: ignore[misc]

    def test_initial_attributes(self) -> None:
        machine = InferenceGraphCapture(1, enabled=True)
        assert machine.graph_id is None
        assert machine.capture_attempted is False
        assert machine.is_captured is False

    def test_record_capture_stores_everything(self) -> None:
        machine = InferenceGraphCapture(1, enabled=True)
        machine.record_capture(42, 8, 3)
        assert machine.graph_id == 42
        assert machine.capture_attempted is True
        assert machine.is_captured is True
        assert machine.check_static_shape(8, 3) is True

    def test_graph_id_zero_counts_as_captured(self) -> None:
        machine = InferenceGraphCapture(1, enabled=True)
        machine.record_capture(0, 8, 3)
        assert machine.is_captured is True

    def test_is_captured_follows_graph_id(self) -> None:
        machine = InferenceGraphCapture(1, enabled=True)
        machine.graph_id = 5
        assert machine.is_captured is True
        machine.graph_id = None
        assert machine.is_captured is False

    def test_static_shape_is_false_before_any_capture(self) -> None:
        machine = InferenceGraphCapture(1, enabled=True)
        assert machine.check_static_shape(8, 3) is False
        machine.capture_attempted = True
        assert machine.check_static_shape(8, 3) is False

    @pytest.mark.parametrize("batch_size, seq_step", [(4, 3), (8, 2), (4, 2)])
    def test_static_shape_is_false_when_either_value_differs(self, batch_size: int, seq_step: int) -> None:
        machine = InferenceGraphCapture(1, enabled=True)
        machine.record_capture(7, 8, 3)
        assert machine.check_static_shape(batch_size, seq_step) is False

    def test_disable_turns_graphs_off_for_good(self) -> None:
        machine = advanced(InferenceGraphCapture(1, enabled=True), 1)
        machine.record_capture(7, 8, 1)
        machine.advance()
        assert machine.step_mode() is StepMode.REPLAY
        machine.disable()
        for _ in range(4):
            assert machine.step_mode() is StepMode.WARMUP
            machine.advance()

    def test_disable_before_capture_prevents_it(self) -> None:
        machine = InferenceGraphCapture(1, enabled=True)
        machine.disable()
        machine.advance()
        assert machine.step_mode() is StepMode.WARMUP
