"""The pack's own Python: the fake engine handed to student code and the engine_calls check."""

from __future__ import annotations

import pytest

from labs.decode_step.pack.checks import (
    describe_calls,
    judge_engine_calls,
    parse_accepted,
    parse_expected_calls,
)
from labs.decode_step.pack.engine import (
    CallLog,
    EngineError,
    FakeDecodeEngine,
    GraphCaptureError,
    GraphReplayError,
    engine_setup,
    step_tokens,
)


def _engine(**kwargs):
    log = CallLog()
    return FakeDecodeEngine(engine_setup(**kwargs), log), log


def test_the_engine_records_every_call_in_order_in_the_log_it_was_given():
    engine, log = _engine()
    assert engine.run(2, 1) == [1000, 1001]
    captured = engine.capture(2, 1)
    assert (captured.graph_id, captured.tokens) == (0, [1000, 1001])
    assert engine.replay(0, 2, 1) == [1000, 1001]
    assert log.calls == [("run", 2, 1), ("capture", 2, 1), ("replay", 0, 2, 1)]


def test_the_log_is_cut_per_step_by_mark_and_since():
    engine, log = _engine()
    engine.run(1, 0)
    mark = log.mark()
    engine.run(3, 0)
    assert log.since(mark) == [("run", 3, 0)]


def test_the_log_asks_for_the_callers_site_of_every_call():
    lines = iter([12, 40])
    log = CallLog(site=lambda: next(lines))
    engine = FakeDecodeEngine(engine_setup(), log)
    engine.run(1, 0)
    engine.capture(1, 0)
    assert log.sites == [12, 40]
    unsited, unsited_log = _engine()
    unsited.run(1, 0)
    assert unsited_log.sites == [-1]


def test_a_student_cannot_hang_new_attributes_on_the_engine():
    engine, _ = _engine()
    with pytest.raises(AttributeError):
        engine.calls = []


def test_graph_ids_count_up_from_the_first_one():
    engine, _ = _engine(first_graph_id=7)
    assert [engine.capture(4, 1).graph_id, engine.capture(2, 1).graph_id] == [7, 8]


def test_the_engine_fails_a_run_a_capture_or_a_replay_when_told_to_and_still_records_the_call():
    engine, log = _engine(fail_capture=True, fail_runs=[1], fail_replays=[0])
    engine.run(4, 1)
    with pytest.raises(EngineError):
        engine.run(4, 1)
    with pytest.raises(GraphCaptureError):
        engine.capture(4, 1)
    assert log.calls == [("run", 4, 1), ("run", 4, 1), ("capture", 4, 1)]

    other, _ = _engine(fail_replays=[0])
    gid = other.capture(4, 1).graph_id
    with pytest.raises(GraphReplayError, match="failed to replay"):
        other.replay(gid, 4, 1)
    assert other.replay(gid, 4, 1) == step_tokens(4, 1)  # only the first replay was told to fail


def test_a_replay_of_an_unknown_graph_or_of_another_shape_raises():
    engine, _ = _engine()
    with pytest.raises(GraphReplayError, match="no graph has id 0"):
        engine.replay(0, 4, 1)
    gid = engine.capture(4, 1).graph_id
    with pytest.raises(GraphReplayError, match="captured for batch_size=4, seq_step=1"):
        engine.replay(gid, 2, 1)
    with pytest.raises(GraphReplayError):
        engine.replay(gid, 4, 2)


def test_the_engine_errors_are_runtime_errors_a_student_can_catch_without_importing_them():
    assert all(issubclass(e, RuntimeError) for e in (EngineError, GraphCaptureError, GraphReplayError))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"fail_capture": 1}, "fail_capture: expected true or false"),
        ({"fail_runs": 3}, "fail_runs: expected a list of integers >= 0"),
        ({"fail_runs": [-1]}, "fail_runs: expected a list of integers >= 0"),
        ({"fail_replays": [True]}, "fail_replays: expected a list of integers >= 0"),
        ({"first_graph_id": -2}, "first_graph_id: expected an integer >= 0"),
    ],
)
def test_a_bad_engine_setting_is_one_line_naming_it(kwargs, message):
    with pytest.raises(ValueError, match=message) as raised:
        engine_setup(**kwargs)
    assert "\n" not in str(raised.value)


def test_expected_calls_are_parsed_and_checked():
    assert parse_expected_calls([["run", 4, 1], ["replay", 0, 4, 1]]) == (("run", 4, 1), ("replay", 0, 4, 1))
    assert parse_expected_calls([]) == ()
    for bad, message in [
        ("run", "expected a list of calls"),
        ([["launch", 1, 2]], r"equals\[0\]: expected \[run\|capture\|replay"),
        ([["run", 4]], r"a run call is \[run, batch_size, seq_step\]"),
        ([["replay", 4, 1]], r"a replay call is \[replay, graph_id, batch_size, seq_step\]"),
        ([["capture", True, 1]], "a capture call is"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_expected_calls(bad)


def test_a_check_takes_exactly_one_of_equals_and_one_of():
    assert parse_accepted(equals=[["run", 4, 1]]) == ((("run", 4, 1),),)
    assert len(parse_accepted(one_of=[[["run", 4, 1]], [["replay", 0, 4, 1]]])) == 2
    with pytest.raises(ValueError, match="exactly one of"):
        parse_accepted()
    with pytest.raises(ValueError, match="exactly one of"):
        parse_accepted(equals=[], one_of=[[], []])
    with pytest.raises(ValueError, match="two or more"):
        parse_accepted(one_of=[[["run", 4, 1]]])
    with pytest.raises(ValueError, match=r"one_of\[1\]\.equals\[0\]"):
        parse_accepted(one_of=[[["run", 4, 1]], [["run"]]])


def test_the_verdict_passes_only_on_the_exact_calls_in_order():
    accepted = parse_accepted(equals=[["capture", 4, 1], ["run", 4, 1]])
    assert judge_engine_calls("s1", accepted, [["capture", 4, 1], ["run", 4, 1]]).passed
    wrong_order = judge_engine_calls("s1", accepted, [["run", 4, 1], ["capture", 4, 1]])
    assert not wrong_order.passed
    assert wrong_order.actual == "run(batch_size=4, seq_step=1), then capture(batch_size=4, seq_step=1)"
    assert not judge_engine_calls("s1", accepted, [["capture", 4, 1]]).passed
    assert not judge_engine_calls("s1", accepted, [["capture", 4, 1], ["run", 4, 1], ["run", 4, 1]]).passed
    not_run = judge_engine_calls("s1", accepted, None)
    assert not not_run.passed and not_run.actual == "s1 did not run"


def test_a_one_of_verdict_accepts_any_listed_call_list_and_names_them_all():
    accepted = parse_accepted(one_of=[[["run", 4, 1]], [["replay", 0, 4, 1]]])
    assert judge_engine_calls("s2", accepted, [["run", 4, 1]]).passed
    assert judge_engine_calls("s2", accepted, [["replay", 0, 4, 1]]).passed
    verdict = judge_engine_calls("s2", accepted, [["capture", 4, 1]])
    assert not verdict.passed
    assert verdict.expected == "run(batch_size=4, seq_step=1) or replay(graph_id=0, batch_size=4, seq_step=1)"
    assert verdict.claim.startswith("during s2, the engine was called: ")
    assert describe_calls([]) == "no call"
