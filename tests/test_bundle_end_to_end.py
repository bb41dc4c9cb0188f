"""The Gradescope bundle and the student kit, installed as their users install them, in fresh
virtual environments with pip resolving their dependencies (no ``--no-deps``: what is missing
from a generated ``pyproject.toml`` is missing here too). Issue 34, point 5; issue 31, point 1b.

* the bundle: ``setup.sh --root ROOT`` installs its kit, then ``run_autograder --root ROOT``,
  started from the submission's folder, grades it and writes ``ROOT/results/results.json``;
  the student's own ``reference.py``, ``specs.py`` and ``grader/`` there are never imported;
* the kit: ``pip install kit.zip`` then ``pytest -q`` in the student's folder runs the public
  cases (the kit depends on pytest).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hostile"))
from materialize import markers_of, materialize  # noqa: E402

pytestmark = pytest.mark.slow
CORRECT = REPO / "tests" / "correct_variants" / "minimal" / "cudagraph.py"


def _venv(path: Path) -> Path:
    """A fresh venv with pip, seeing nothing of this environment's packages."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=600)
    return path / "bin"


def _env(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and "PYTEST" not in k}
    return {**env, "PATH": f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def test_bundle_setup_and_run_autograder_end_to_end_in_a_temporary_root(tmp_path):
    from grader.commands.bundles import build_bundle

    root = tmp_path / "autograder"
    with zipfile.ZipFile(build_bundle(tmp_path / "autograder.zip", REPO / "specs")) as bundle:
        bundle.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")  # where Gradescope puts it
    # h56: the student's own reference.py, specs.py and grader/ beside the reference solution
    made = materialize(tmp_path / "subs", ["h56_shadow_reference"])["h56_shadow_reference"]
    shutil.copytree(made, root / "submission")
    shutil.copy(CORRECT, root / "submission" / "cudagraph.py")
    env = _env(_venv(tmp_path / "gradescope-python"))

    done = subprocess.run(
        ["bash", str(root / "source" / "setup.sh"), "--root", str(root)],
        cwd=root / "submission",
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert not (root / "source" / "kit").exists()  # the readable copy of the reference is gone

    done = subprocess.run(
        [str(root / "run_autograder"), "--root", str(root)],
        cwd=root / "submission",
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 100 and len(results["tests"]) > 90  # hidden cases included
    markers = markers_of(root / "submission")
    assert not markers.exists() or not list(markers.iterdir()), sorted(p.name for p in markers.iterdir())
    assert "SHADOW-IMPORTED" not in done.stdout + done.stderr
    assert (root / "source" / "specs").stat().st_mode & 0o077 == 0  # locked before the student's code ran


def test_the_kit_installs_pytest_and_pytest_runs_the_public_cases(tmp_path):
    from grader.commands.kit import build_student_kit

    kit = build_student_kit(tmp_path / "graphgrade-kit.zip", REPO / "specs")
    assert kit["public_cases"] > 0
    bin_dir = _venv(tmp_path / "student-python")
    env = _env(bin_dir)
    done = subprocess.run(
        [str(bin_dir / "pip"), "install", "-q", str(tmp_path / "graphgrade-kit.zip")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lab = tmp_path / "my-lab"
    lab.mkdir()
    shutil.copy(CORRECT, lab / "cudagraph.py")
    done = subprocess.run(
        [str(bin_dir / "pytest"), "-q", "-p", "no:cacheprovider"],
        cwd=lab,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert f"{kit['public_cases']} passed" in done.stdout, done.stdout[-2000:]
