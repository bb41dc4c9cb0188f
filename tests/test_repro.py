"""``graphgrade repro SPEC/CASE [SUBMISSION]``: a runnable script that reproduces one case."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.labs import REFERENCE, eager_submission, lab, typo_submission

from grader.arrays import build_array
from grader.commands import cli, repro
from grader.commands.cli_common import default_specs_dir
from grader.spec_model import ArrayValue
from grader.suite.loader import load_suite

REPO = Path(__file__).resolve().parents[1]
LOADED = load_suite(default_specs_dir())


def _script(capsys, *args: str) -> str:
    assert cli.main(["repro", *args]) == 0
    return capsys.readouterr().out


def _run(script: str, folder: Path) -> subprocess.CompletedProcess:
    (folder / "repro.py").write_text(script, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, env=env, timeout=120
    )


def test_the_script_reproduces_a_replay_that_runs_the_ops_on_x(tmp_path, capsys):
    folder = lab(tmp_path, eager_submission())
    script = _script(capsys, "replay-basics/long-graph-one-launch")
    assert "import reference" not in script and "from reference" not in script
    done = _run(script, folder)
    assert done.returncode == 0, done.stderr
    replay = done.stdout.split("step 3:")[1]
    assert "launches: 6   (expected 1  <-- differs)" in replay
    assert "op 0 of list 0 was handed float64[4, 6]: the array passed in to this step" in replay
    # the correct submission shows nothing that differs, step after step
    correct = _run(script, lab(tmp_path / "ok", REFERENCE))
    assert (
        correct.returncode == 0 and "differs" not in correct.stdout and "launches: 1   (expected 1)" in correct.stdout
    )


def test_the_script_compares_outputs_with_the_graders_tolerance(tmp_path, capsys):
    """A float64 replay off by 1e-7 fails the grader's float64 tolerance; the script says so
    (a float32 tolerance would have called it equal)."""
    off = REFERENCE.replace("        return self._real_rows(y, x)\n", "        return self._real_rows(y, x) + 1e-7\n")
    assert off != REFERENCE
    done = _run(_script(capsys, "replay-basics/long-graph-one-launch"), lab(tmp_path, off))
    assert done.returncode == 0, done.stderr
    replay = done.stdout.split("step 3:")[1]
    assert "expected output: float64[4, 6]  <-- differs: " in replay


def test_the_script_shows_where_a_typo_raises_and_names_the_submission_folder(tmp_path, capsys):
    folder = lab(tmp_path, typo_submission())
    script = _script(capsys, "replay-basics/long-graph-one-launch", str(folder / "cudagraph.py"), "-o", "-")
    assert repr(str(folder.resolve())) in script  # imports that submission, wherever it is run
    done = _run(script, tmp_path)
    assert "step 3: replayed = runner(float64[4, 6] seed 4)\n    raised AttributeError" in done.stdout
    assert f'File "{folder.resolve() / "cudagraph.py"}"' in done.stderr and "entry.static_inputs" in done.stderr


def test_every_case_of_the_suite_makes_a_script_the_reference_passes(tmp_path, capsys):
    folder = lab(tmp_path, REFERENCE)
    for spec in LOADED.suite.specs:
        for case in spec.cases:
            text = repro.script(spec, case, LOADED.oracles[case.uid], None)
            compile(text, case.uid, "exec")
            if spec.id in ("replay-basics", "static-buffer-basics", "piecewise-basics", "state-machine-basics"):
                done = _run(text, folder)
                assert done.returncode == 0 and "differs" not in done.stdout, (case.uid, done.stdout, done.stderr)


@pytest.mark.parametrize("value", [ArrayValue("float32", (4, 8), 1), ArrayValue("float64", (2, 3, 5), 12)])
def test_the_scripts_inputs_are_the_graders(value):
    namespace: dict = {}
    exec(repro.HELPERS, {"np": np, "WITNESS": None, "data_address": None}, namespace)
    built = namespace["array"](value.dtype, value.shape, value.seed)
    assert built.dtype == build_array(value).dtype and np.array_equal(built, build_array(value))


def test_a_hidden_case_is_refused_in_the_kit_and_written_for_staff(monkeypatch, capsys):
    hidden = "replay-edge/six-calls-in-a-row"
    assert "six-calls-in-a-row" in _script(capsys, hidden)  # the full package: staff may
    from grader.commands import kit

    monkeypatch.setattr(kit, "kit_info", lambda: {"format": 1})
    assert cli.main(["repro", hidden]) == 2
    err = capsys.readouterr()
    assert err.out == "" and err.err.count("\n") == 1 and "hidden case" in err.err
    assert "six-calls-in-a-row" in err.err and "Traceback" not in err.err
    assert cli.main(["repro", "replay-basics/long-graph-one-launch"]) == 0  # a public case still is


def test_bad_arguments_are_one_line(capsys):
    for args in (["no-slash"], ["replay-basics/nope"], ["replay-basics/long-graph-one-launch", "/no/such/dir"]):
        assert cli.main(["repro", *args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("graphgrade: ")


def test_the_script_is_written_beside_the_submission_and_never_flagged(tmp_path, capsys, monkeypatch):
    """`graphgrade repro CASE [FOLDER]` writes FOLDER-repro/SPEC--CASE.py beside the submission:
    the submission's integrity scan (which flags `import grader`) never sees it."""
    from grader.judging.integrity import integrity_flags

    folder = lab(tmp_path, REFERENCE)
    before = sorted(p.name for p in folder.iterdir())
    monkeypatch.chdir(folder)  # in the student's folder, no argument: that folder is the submission
    assert cli.main(["repro", "replay-basics/long-graph-one-launch"]) == 0
    err = capsys.readouterr()
    written = tmp_path / "lab-repro" / "replay-basics--long-graph-one-launch.py"
    assert err.out == "" and f"wrote {written}" in err.err
    assert sorted(p.name for p in folder.iterdir()) == before
    assert not [f for f in integrity_flags(folder) if f.rule == "import-grader"]
    # the script itself is what a scan would flag, were it inside: the test can fail
    assert any(f.rule == "import-grader" for f in integrity_flags(written.parent))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(written)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and "launches: 1   (expected 1)" in done.stdout, done.stderr
    assert cli.main(["repro", "replay-basics/long-graph-one-launch", str(folder)]) == 0  # named: the same place
    assert f"wrote {written}" in capsys.readouterr().err


@pytest.mark.parametrize("inside", ["repro.py", "sub/repro.py", "./x/../repro.py"])
def test_an_output_inside_the_submission_is_refused_in_one_line(tmp_path, capsys, monkeypatch, inside):
    folder = lab(tmp_path, REFERENCE)
    monkeypatch.chdir(folder)
    assert cli.main(["repro", "replay-basics/long-graph-one-launch", "-o", inside]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "inside the submission" in err and "import-grader" in err
    assert sorted(p.name for p in folder.iterdir()) == ["cudagraph.py"]
    assert cli.main(["repro", "replay-basics/long-graph-one-launch", "-o", str(tmp_path / "elsewhere.py")]) == 0
    assert (tmp_path / "elsewhere.py").is_file()


def test_the_handouts_layout_is_one_submission_and_its_package_imports_work(tmp_path, capsys, monkeypatch):
    """mini_vllm/cudagraph.py (relative imports allowed): the script imports it from the package,
    and it is written beside the repository, from the repository or from inside mini_vllm/."""
    repo = tmp_path / "repo"
    (repo / "mini_vllm").mkdir(parents=True)
    own = "\nfrom .helper import X  # noqa: E402, F401 (relative)\nimport helper  # noqa: E402, F401 (bare name)\n"
    (repo / "mini_vllm" / "cudagraph.py").write_text(REFERENCE + own, encoding="utf-8")
    (repo / "mini_vllm" / "helper.py").write_text("X = 1\n", encoding="utf-8")
    written = tmp_path / "repo-repro" / "replay-basics--long-graph-one-launch.py"
    for where in (repo, repo / "mini_vllm"):
        monkeypatch.chdir(where)
        assert cli.main(["repro", "replay-basics/long-graph-one-launch"]) == 0
        assert f"wrote {written}" in capsys.readouterr().err
        written.unlink()
    assert cli.main(["repro", "replay-basics/long-graph-one-launch", str(repo / "mini_vllm" / "cudagraph.py")]) == 0
    assert f"wrote {written}" in capsys.readouterr().err
    assert "from mini_vllm import cudagraph" in written.read_text(encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(written)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and "launches: 1   (expected 1)" in done.stdout, done.stderr
    assert sorted(p.name for p in (repo / "mini_vllm").iterdir() if p.name != "__pycache__") == [
        "cudagraph.py",
        "helper.py",
    ]
