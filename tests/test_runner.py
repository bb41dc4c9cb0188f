"""grader.run.runner: a submission's time budget, as the student reads it in report.json."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SLOW_EAGER = """\
import time

from reference_copy import *  # noqa: F401,F403
import reference_copy


def run_eager(ops, x):
    time.sleep(0.6)
    return reference_copy.run_eager(ops, x)
"""


@pytest.mark.slow
def test_cases_after_the_budget_is_used_up_are_not_run_and_say_why(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(ROOT / "specs" / "02_eager.yaml", specs)
    student = tmp_path / "student"
    student.mkdir()
    shutil.copy(ROOT / "reference" / "cudagraph.py", student / "reference_copy.py")
    (student / "cudagraph.py").write_text(SLOW_EAGER, encoding="utf-8")
    argv = [
        sys.executable,
        "-m",
        "grader.commands.cli",
        "grade",
        str(student),
        "--specs",
        str(specs),
        "--out",
        str(tmp_path / "out"),
    ]
    argv += ["--budget", "2", "--timeout", "5", "--no-cache", "--jobs", "1"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode in (0, 1), done.stderr
    cases = json.loads((tmp_path / "out" / "student" / "report.json").read_text(encoding="utf-8"))["cases"]
    unrun = [i for i, c in enumerate(cases) if c["message"] == "not run: the submission used up its 2 s time budget"]
    assert unrun, "a 2 s budget cannot hold every case of a submission that sleeps 0.6 s per eager run"
    assert unrun == list(range(unrun[0], len(cases))), "once the budget is used up, no later case runs"
    assert all(cases[i]["status"] == "timeout" for i in unrun)
    assert all(c["status"] in ("passed", "timeout") for c in cases[: unrun[0]]), "the cases before it were graded"
