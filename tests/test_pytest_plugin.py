"""``pytest`` in a student's folder (grader.commands.pytest_plugin), run here as a real pytest in a
fresh folder outside this project; the installed kit's and package's runs are in test_install.py."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.labs import REPLAY_LOAD, lab, reference_with

REPO = Path(__file__).resolve().parents[1]
SPECS = ("01_launch_counter.yaml", "04_static_buffer.yaml")


def _plugin_args() -> list[str]:
    """Load the plugin by its entry point where this environment has it (an install made before
    the entry point existed has not): never both, which would register it twice."""
    names = {e.name for e in importlib.metadata.entry_points(group="pytest11")}
    return [] if "graphgrade" in names else ["-p", "grader.commands.pytest_plugin"]


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # pytest prints each failure's whole message in the short summary when $CI or $BUILD_NUMBER
    # is set, and cuts it to the terminal's width elsewhere: the same output on every machine.
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:randomly", *_plugin_args(), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize("isolation", ["module", "process"])
def test_a_replay_on_x_fails_its_items_with_the_students_line(tmp_path, isolation):
    source = reference_with(REPLAY_LOAD, "        y = x")  # the replay runs the ops on the caller's array
    line = source.splitlines().index("            y = op(y)") + 1
    folder = lab(tmp_path, source, SPECS)
    specs = str(tmp_path / "specs")
    done = _pytest(folder, "-q", "--graphgrade-specs", specs, "--graphgrade-isolation", isolation)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "FAILED cudagraph.py::static-buffer-basics::first-op-sees-static-buffer" in done.stdout
    assert "the ops ran on the caller's array instead of the static input buffer" in done.stdout
    assert f"called at cudagraph.py:{line} in _replay: y = op(y)" in done.stdout
    assert "launch-counter-basics" not in done.stdout.split("short test summary")[-1]  # those pass
    # -x stops at the first failure; -k picks cases by name
    first = _pytest(folder, "-q", "-x", "--graphgrade-specs", specs)
    assert first.returncode == 1 and "1 failed" in first.stdout and "stopping after 1 failures" in first.stdout
    picked = _pytest(folder, "-q", "-k", "launch-counter", "--graphgrade-specs", specs)
    assert picked.returncode == 0 and " passed" in picked.stdout and "deselected" in picked.stdout


def test_this_projects_own_suite_never_collects_a_cudagraph(tmp_path):
    # the repo's pytest options turn the plugin off, even where pytest starts beside a cudagraph.py
    for folder in (REPO / "tests" / "correct_variants" / "minimal", REPO / "reference"):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:randomly"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert "cudagraph.py::" not in done.stdout, done.stdout[-2000:]
    # and a folder without cudagraph.py collects nothing of it
    (tmp_path / "test_other.py").write_text("def test_other():\n    pass\n", encoding="utf-8")
    done = _pytest(tmp_path, "-q")
    assert done.returncode == 0 and "1 passed" in done.stdout and "cudagraph.py::" not in done.stdout


def test_the_folder_may_be_named_instead_of_entered(tmp_path):
    folder = lab(tmp_path, reference_with(REPLAY_LOAD, "        y = x"), SPECS)
    done = _pytest(tmp_path, "-q", str(folder), "-k", "first-op", "--graphgrade-specs", str(tmp_path / "specs"))
    assert done.returncode == 1 and "lab/cudagraph.py::static-buffer-basics::first-op-sees-static-buffer" in done.stdout
    # two folders, or one without cudagraph.py: nothing of the plugin
    other = tmp_path / "other"
    other.mkdir()
    (other / "test_x.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    done = _pytest(tmp_path, "-q", str(other))
    assert done.returncode == 0 and "1 passed" in done.stdout and "cudagraph.py::" not in done.stdout


def test_an_import_failure_is_shown_once_not_in_every_item(tmp_path):
    folder = lab(tmp_path, "def broken(:\n    pass\n", SPECS)
    done = _pytest(folder, "-q", "--graphgrade-specs", str(tmp_path / "specs"))
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    blocks = done.stdout.split("short test summary info")[0]  # the failure blocks, not the summary
    assert blocks.count("SyntaxError") == 1, done.stdout[-3000:]
    assert "cudagraph.py:1: SyntaxError" in done.stdout
    assert "1 failed" in done.stdout
    assert "stopping: the problem above kept the remaining cases from running" in done.stdout
    assert "Hint:" not in done.stdout  # a spec's hint is about its own behaviour, not an import error


def test_pytest_with_another_lab_runs_that_labs_public_cases(tmp_path):
    """``--graphgrade-lab=PATH`` (with ``=``: pytest takes a bare path after an unknown option for
    a folder to collect, before the plugin is loaded): the lab's module file is collected, against
    the lab's visible specs."""
    import shutil

    pack = REPO / "labs" / "decode_step"
    folder = tmp_path / "my-lab"
    folder.mkdir()
    shutil.copy(pack / "reference" / "decode_step.py", folder / "decode_step.py")
    done = _pytest(folder, "-q", f"--graphgrade-lab={pack}", "-k", "step-count-basics")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "2 passed" in done.stdout
    listed = _pytest(folder, "--collect-only", "-q", f"--graphgrade-lab={pack}")
    assert "decode_step.py::decode-loop-basics::warmup-then-capture" in listed.stdout
    assert "decode-loop-edge" not in listed.stdout  # a hidden spec is never collected
