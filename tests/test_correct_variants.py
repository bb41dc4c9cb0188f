"""No false failures: correct submissions written independently of the reference get full marks.

Each folder in tests/correct_variants/ was written from the contract alone (docs/contract.md), making different
legitimate choices than the reference (aliased outputs, string keys, int-valued StepMode,
np.pad, ...). A spec or check stricter than docs/contract.md fails here first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

VARIANTS = Path(__file__).parent / "correct_variants"
NAMES = sorted(p.name for p in VARIANTS.iterdir() if (p / "cudagraph.py").is_file())


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.commands.cli",
            "grade",
            *(str(VARIANTS / n) for n in NAMES),
            "--out",
            str(out),
            "--visibility",
            "all",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return {n: json.loads((out / n / "report.json").read_text()) for n in NAMES}


def test_there_are_several_variants():
    assert len(NAMES) >= 3


@pytest.mark.parametrize("name", NAMES)
def test_a_correct_variant_gets_full_marks_on_every_case(graded, name):
    report = graded[name]
    failing = [f"{c['spec']}/{c['case']}: {c['message']}" for c in report["cases"] if c["status"] != "passed"]
    assert not failing, f"{name} is correct by docs/contract.md but failed:\n" + "\n".join(failing)
    assert report["score"] == report["max_score"] == 106  # 100, and 6 for the answers.md each ships
