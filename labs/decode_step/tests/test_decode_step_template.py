"""The student's own tests (student_template/test_inference_graph.py): the reference passes
every one, the untouched template none. Run with pytest in a scratch folder, as a student does."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACK = Path(__file__).resolve().parents[1]

TEMPLATE = PACK / "student_template"
PLAN_TESTS = (
    "test_step_mode_warmup_until_threshold",
    "test_step_mode_capture_at_threshold",
    "test_step_mode_replay_after_capture",
    "test_advance_increments_step_count",
    "test_static_shape_check_passes_same_shape",
    "test_static_shape_check_fails_different_batch",
    "test_is_captured_false_before_record_capture",
    "test_inference_graph_capture_disabled_by_default",
)


def _student_pytest(tmp_path, solution):
    shutil.copy(solution, tmp_path / "decode_step.py")
    shutil.copy(TEMPLATE / "test_inference_graph.py", tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not this repository's settings
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rA",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:graphgrade",
            "-p",
            "no:xdist",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    passed = {line.split("::")[1] for line in result.stdout.splitlines() if line.startswith("PASSED ")}
    failed = {line.split("::")[1].split(" ")[0] for line in result.stdout.splitlines() if line.startswith("FAILED ")}
    return result, passed, failed


def _defined_tests():
    text = (TEMPLATE / "test_inference_graph.py").read_text(encoding="utf-8")
    return {line[4:].split("(")[0] for line in text.splitlines() if line.startswith("def test_")}


def test_the_student_tests_hold_the_plans_eight_and_more():
    defined = _defined_tests()
    assert set(PLAN_TESTS) <= defined and len(defined) > len(PLAN_TESTS)


@pytest.mark.parametrize("solution, should_pass", [("reference", True), ("template", False)])
def test_the_reference_passes_the_student_tests_and_the_template_fails_them(tmp_path, solution, should_pass):
    path = PACK / "reference" / "decode_step.py" if should_pass else TEMPLATE / "decode_step.py"
    result, passed, failed = _student_pytest(tmp_path, path)
    if should_pass:
        assert result.returncode == 0 and passed == _defined_tests() and not failed, result.stdout[-2000:]
    else:
        assert result.returncode == 1 and failed == _defined_tests() and not passed, result.stdout[-2000:]
