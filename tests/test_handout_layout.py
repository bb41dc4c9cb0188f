"""The handout's layout: the lab file at ``mini_vllm/cudagraph.py`` grades exactly as the same
file at the top of the submission (issue 33, point 1), relative imports inside the package
included; so does a repository where exactly one cudagraph.py lies deeper; two candidates and
none are one clear message naming what was found."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.labs import REFERENCE, REPLAY_LOAD, reference_with

from grader.run.copying import SubmissionProblem, module_file

REPO = Path(__file__).resolve().parents[1]
BUGGY = reference_with(REPLAY_LOAD, "        y = x")  # the replay runs the ops on the caller's array


def _write(folder: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def _split_with_relative_import(source: str) -> dict[str, str]:
    """``source`` with its LaunchCounter moved to ``mini_vllm/counter.py`` and imported back
    relatively (``from .counter import LaunchCounter``), with no ``__init__.py``."""
    lines = source.splitlines(keepends=True)
    start = lines.index("class LaunchCounter:\n")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() and not lines[i].startswith((" ", "\n")))
    counter = "".join(lines[start:end])
    rest = "".join(lines[:start]) + "from .counter import LaunchCounter\n\n\n" + "".join(lines[end:])
    return {"mini_vllm/cudagraph.py": rest, "mini_vllm/counter.py": counter}


def _answers(source: str) -> str:
    """answers.md for a copy of the reference: the lines that do each slot's work in ``source``,
    cited as bare numbers (the student's cudagraph.py, wherever it lies)."""
    lines = source.splitlines()

    def at(text: str, after: int = 0) -> int:
        return next(i + 1 for i in range(after, len(lines)) if text in lines[i])

    win = at("LaunchCounter.bump(1)", at("def _replay("))
    return f"constraint-1: {at('entry = self.graphs.get(key)')}\nconstraint-2: {at('np.copyto(static_input, x)')}\nwin: {win}\n"


def _run(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


def _grade(tmp_path: Path, *subs: Path, isolation: str = "module") -> dict[str, dict]:
    out = tmp_path / "out"
    done = _run(
        ["-m", "grader", "grade", *map(str, subs), "--out", str(out), "--no-cache", "--isolation", isolation], tmp_path
    )
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    return {sub.name: json.loads((out / sub.name / "report.json").read_text(encoding="utf-8")) for sub in subs}


def _plugin_args() -> list[str]:
    """The plugin by its entry point where this environment has it, else by name (never both)."""
    names = {e.name for e in importlib.metadata.entry_points(group="pytest11")}
    return [] if "graphgrade" in names else ["-p", "grader.commands.pytest_plugin"]


def _verdicts(report: dict) -> list[tuple[str, str, str]]:
    return [(c["spec"], c["case"], c["status"]) for c in report["cases"]]


# ------------------------------------------------------------------ which file is the module
def test_the_file_at_the_top_wins_then_the_one_deeper():
    assert module_file(["cudagraph.py", "old/cudagraph.py"], "alice") == "cudagraph.py"
    assert module_file(["README.md", "mini_vllm/cudagraph.py", "mini_vllm/__init__.py"], "alice") == (
        "mini_vllm/cudagraph.py"
    )
    assert module_file(["src/lab/cudagraph.py"], "alice") == "src/lab/cudagraph.py"


def test_none_or_two_deeper_is_one_line_naming_what_was_found():
    with pytest.raises(SubmissionProblem, match=r"^no cudagraph.py in alice/: .*mini_vllm/"):
        module_file(["cuda_graph.py"], "alice")
    with pytest.raises(SubmissionProblem) as two:
        module_file(["a/cudagraph.py", "mini_vllm/cudagraph.py"], "alice")
    message = str(two.value)
    assert "\n" not in message and "a/cudagraph.py" in message and "mini_vllm/cudagraph.py" in message


# ------------------------------------------------------------------ graded end to end
@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["module", "process"])
def test_the_handout_layout_grades_exactly_as_the_flat_one(tmp_path, isolation):
    split = _split_with_relative_import(REFERENCE)
    answers = {"answers.md": _answers(REFERENCE)}  # the notebook answers, as bare line numbers
    subs = [
        _write(tmp_path / "flat", {"cudagraph.py": REFERENCE, **answers}),
        _write(tmp_path / "package", {"mini_vllm/__init__.py": "", "mini_vllm/cudagraph.py": REFERENCE, **answers}),
        _write(tmp_path / "relative", {**split, "answers.md": _answers(split["mini_vllm/cudagraph.py"])}),
        _write(tmp_path / "spaced", {"lab 3/cudagraph.py": REFERENCE, "README.md": "my lab\n", **answers}),
        _write(tmp_path / "flat_bug", {"cudagraph.py": BUGGY, **answers}),
        _write(tmp_path / "handout_bug", {"mini_vllm/__init__.py": "", "mini_vllm/cudagraph.py": BUGGY, **answers}),
    ]
    reports = _grade(tmp_path, *subs, isolation=isolation)
    flat = reports["flat"]
    assert flat["score"] == flat["max_score"] and not flat["problem"]
    for name in ("package", "relative", "spaced"):
        assert not reports[name]["problem"], reports[name]["problem"]
        assert _verdicts(reports[name]) == _verdicts(flat), name
    flat_bug, handout_bug = reports["flat_bug"], reports["handout_bug"]
    assert flat_bug["score"] < flat_bug["max_score"]
    assert _verdicts(handout_bug) == _verdicts(flat_bug)
    assert handout_bug["score"] == flat_bug["score"]
    # the student's own path in every message that names a line of theirs
    flat_text = json.dumps([c["message"] for c in flat_bug["cases"]])
    handout_text = json.dumps([c["message"] for c in handout_bug["cases"]])
    assert "called at cudagraph.py:" in flat_text
    assert "called at mini_vllm/cudagraph.py:" in handout_text
    assert handout_text.replace("mini_vllm/cudagraph.py", "cudagraph.py") == flat_text


@pytest.mark.slow
def test_two_candidates_deeper_fail_the_submission_with_both_named(tmp_path):
    sub = _write(tmp_path / "two", {"a/cudagraph.py": REFERENCE, "mini_vllm/cudagraph.py": REFERENCE})
    report = _grade(tmp_path, sub)["two"]
    assert report["score"] == 0
    assert "a/cudagraph.py" in report["problem"] and "mini_vllm/cudagraph.py" in report["problem"]


@pytest.mark.slow
def test_graphgrade_grade_with_no_path_grades_a_handout_layout_folder(tmp_path):
    _write(
        tmp_path, {"mini_vllm/cudagraph.py": REFERENCE, "mini_vllm/__init__.py": "", "answers.md": _answers(REFERENCE)}
    )
    done = _run(["-m", "grader", "grade", "--out", "out", "--no-cache"], tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "grading this folder (./mini_vllm/cudagraph.py)" in done.stderr
    assert "bundled reference" not in done.stderr
    (report,) = (tmp_path / "out").glob("*/report.json")
    graded = json.loads(report.read_text(encoding="utf-8"))
    assert graded["score"] == graded["max_score"] and graded["submission"] == tmp_path.name


@pytest.mark.slow
def test_the_kits_pytest_runs_in_the_handout_layout(tmp_path):
    sub = _write(tmp_path / "repo", {"mini_vllm/__init__.py": "", "mini_vllm/cudagraph.py": BUGGY})
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = _run(["-m", "pytest", "-q", "-p", "no:randomly", *_plugin_args(), "-k", "static"], sub, env)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "FAILED mini_vllm/cudagraph.py::static-buffer-basics::first-op-sees-static-buffer" in done.stdout
    assert "called at mini_vllm/cudagraph.py:" in done.stdout
