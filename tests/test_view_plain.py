"""Unit tests of ``reports.view.plain``: one case as plain text (Gradescope, JUnit, PrairieLearn),
with 1-based step numbers, expected next to observed for a failed check, and nothing of a
redacted case but its one message."""

from __future__ import annotations

from dataclasses import replace

from test_reports_samples import REPLAY_FAIL, SECRETS, hidden_report

from grader.judging.results import LaunchPoint, StepLine
from reports.view import HIDDEN_NOT_PASSED, full_view, one_bit
from reports.view.plain import case_text


def test_a_failed_case_lists_steps_checks_launches_hint_and_output_in_that_order():
    text = case_text(full_view(REPLAY_FAIL), "Copy, do not rebind.")
    order = [
        REPLAY_FAIL.description,
        REPLAY_FAIL.message,
        "Steps:",
        "Checks:",
        "Launches per step",
        "Hint: Copy",
        "Output (last lines):",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)
    assert "  1. runner = GraphRunner" in text  # step 0 is read as step 1
    assert "[FAIL] step 3: launches during this call" in text and "[ok  ] step 2:" in text
    assert "expected: 1" in text and "observed: 3" in text
    assert "expected: 3" not in text  # a passed check shows no expected/observed
    assert "replay 1/3" in text


def test_a_passed_case_is_one_line():
    passed = replace(REPLAY_FAIL, status="passed", message="")
    assert case_text(full_view(passed), "a hint") == "Passed."


def test_a_redacted_case_gives_its_message_only():
    (case,) = [c for c in hidden_report().cases if c.redacted]
    text = case_text(one_bit(case, 1), "a hint")
    assert text == HIDDEN_NOT_PASSED
    assert not any(secret in text for secret in SECRETS)


def test_a_multi_line_action_stays_on_its_step_line():
    """A step's action or outcome is folded onto one line: it cannot forge another step."""
    case = replace(REPLAY_FAIL, steps=(StepLine(0, "call\n  2. forged -> ok", "returned\nNone"),))
    text = case_text(full_view(case))
    assert "  1. call 2. forged -> ok  ->  returned None" in text and "\n  2. forged" not in text


def test_unreached_launches_show_a_dash():
    case = replace(REPLAY_FAIL, launches=(LaunchPoint(4, "", None, 2),))
    assert "step 5 -/2" in case_text(full_view(case))
