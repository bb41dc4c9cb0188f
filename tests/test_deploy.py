"""The container image's entry points, without a container runtime: Gradescope's run_autograder
and `graphgrade prairielearn` against simulated /autograder and /grade trees in a temporary
folder, as root and as a normal user (nobody)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
BIN = Path(sys.executable).parent  # graphgrade's console script lives beside the interpreter
SPEC = "02_eager.yaml"  # one spec file (visible and hidden cases) keeps each run short
REFERENCE = ROOT / "reference" / "cudagraph.py"

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")


def _nobody_prefix() -> list[str]:
    """A command prefix that runs as nobody. Where the interpreter lives under a folder nobody
    cannot enter (pyenv under /root), a private mount namespace shows just the interpreter's
    folder there (nothing changes outside the namespace); without unshare, skip."""
    drop = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is not installed")
    probe = subprocess.run([*drop, sys.executable, "-c", "import numpy, grader"], capture_output=True, cwd="/")
    if (
        probe.returncode == 0
        and subprocess.run(
            [*drop, "sh", "-c", f"{shlex.quote(sys.executable)} -c pass"], capture_output=True
        ).returncode
        == 0
    ):
        return drop
    real = Path(os.path.realpath(sys.executable))
    hidden = next(
        (
            p
            for p in real.parents
            if p.parent != p and not os.access(p, os.X_OK, effective_ids=False) or (p.stat().st_mode & 0o001) == 0
        ),
        None,
    )
    if hidden is None or shutil.which("unshare") is None:
        pytest.skip(f"{real} is not reachable by nobody")
    inner = next(p for p in real.parents if p.parent == hidden)  # e.g. /root/.pyenv
    script = (
        "set -e; mkdir -p /tmp/.graphgrade-test-bind; mount --bind {inner} /tmp/.graphgrade-test-bind; "
        "mount -t tmpfs -o mode=755 none {hidden}; mkdir -p {inner}; mount --bind /tmp/.graphgrade-test-bind {inner}; "
        'exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"'
    ).format(inner=shlex.quote(str(inner)), hidden=shlex.quote(str(hidden)))
    prefix = ["unshare", "-m", "sh", "-c", script, "sh"]
    if (
        subprocess.run([*prefix, sys.executable, "-c", "import numpy, grader"], capture_output=True, cwd="/").returncode
        != 0
    ):
        pytest.skip("cannot show the interpreter to nobody here")
    return prefix


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": "/tmp",
        "PYTHONPATH": str(ROOT),
        "TMPDIR": "/tmp",
    }


@pytest.fixture
def open_tmp():
    """A temporary folder another user can enter (pytest's own lies under a root-only folder)."""
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="graphgrade-deploy-test-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def autograder_tree(base: Path, submission: str, owner: str | None = None) -> Path:
    root = base / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "submission" / "cudagraph.py").write_text(submission, encoding="utf-8")
    (root / "source" / "specs").mkdir(parents=True)
    shutil.copy(ROOT / "specs" / SPEC, root / "source" / "specs")
    if owner:
        base.chmod(0o755)
        subprocess.run(["chown", "-R", owner, str(root)], check=True)
    return root


def grade_tree(base: Path, submission: str, owner: str | None = None) -> Path:
    root = base / "grade"
    (root / "student").mkdir(parents=True)
    (root / "student" / "cudagraph.py").write_text(submission, encoding="utf-8")
    (root / "tests").mkdir()
    shutil.copy(ROOT / "specs" / SPEC, root / "tests")
    if owner:
        base.chmod(0o755)
        subprocess.run(["chown", "-R", owner, str(root)], check=True)
    return root


def test_run_autograder_as_root(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("Gradescope runs it as root")
    root = autograder_tree(tmp_path, REFERENCE.read_text(encoding="utf-8"))
    proc = subprocess.run(
        ["bash", str(DEPLOY / "run_autograder"), "--root", str(root)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 10.0 and len(results["tests"]) == 10
    assert all(t["status"] == "passed" for t in results["tests"])
    specs = root / "source" / "specs"
    assert specs.stat().st_mode & 0o077 == 0 and (specs / SPEC).stat().st_mode & 0o077 == 0  # locked first


def test_run_autograder_unimportable_still_writes_results(tmp_path):
    root = autograder_tree(tmp_path, "def broken(:\n")
    proc = subprocess.run(
        ["bash", str(DEPLOY / "run_autograder"), "--root", str(root)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 0 and "cudagraph.py:1: SyntaxError" in results["output"]


@needs_root
def test_run_autograder_as_a_normal_user(open_tmp):
    prefix = _nobody_prefix()
    root = autograder_tree(open_tmp, REFERENCE.read_text(encoding="utf-8"), owner="nobody:nogroup")
    proc = subprocess.run(
        [*prefix, "bash", str(DEPLOY / "run_autograder"), "--root", str(root)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stderr
    results_file = root / "results" / "results.json"
    assert results_file.stat().st_uid == 65534  # written by nobody
    results = json.loads(results_file.read_text(encoding="utf-8"))
    assert results["score"] == 10.0 and all(t["status"] == "passed" for t in results["tests"])
    assert (
        root / "source" / "specs"
    ).stat().st_uid == 65534  # a normal user cannot hand them to root: left as they were


@needs_root
def test_prairielearn_job_as_a_normal_user(open_tmp):
    prefix = _nobody_prefix()
    root = grade_tree(open_tmp, REFERENCE.read_text(encoding="utf-8"), owner="nobody:nogroup")
    cmd = [*prefix, sys.executable, "-m", "grader.commands.cli", "prairielearn", "--root", str(root)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=600, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["gradable"] is True and results["score"] == 1.0 and len(results["tests"]) == 10
    assert (root / "results" / "results.json").stat().st_uid == 65534


def test_dockerfile_installs_entry_points_and_locks_secrets():
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    # the files the image copies exist, and the entry points it names are the ones tested above
    for line in text.splitlines():
        if line.startswith("COPY "):
            for src in line.split()[1:-1]:
                assert (ROOT / src).exists(), src
    assert "COPY deploy/run_autograder /autograder/run_autograder" in text
    assert "/usr/local/bin/graphgrade prairielearn" in text
    assert "graphgrade-lock-down" in text and "graphgrade validate" in text
    # nothing fetched at grading time: the entry scripts never install or download
    for script in ("run_autograder", "lock-down"):
        body = (DEPLOY / script).read_text(encoding="utf-8")
        assert not re.search(r"\b(pip3?|apt-get|apt|curl|wget|git)\b", body), script


@needs_root
def test_lock_down_makes_specs_and_reference_root_only(tmp_path):
    # on copies of the two packages, importable from a folder of their own
    site = tmp_path / "site"
    for pkg in ("specs", "reference"):
        shutil.copytree(ROOT / pkg, site / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    fake_python = tmp_path / "python"
    fake_python.write_text(
        f'#!/bin/sh\nPYTHONPATH={shlex.quote(str(site))} exec {shlex.quote(sys.executable)} "$@"\n', encoding="utf-8"
    )
    fake_python.chmod(0o755)
    proc = subprocess.run(
        ["bash", str(DEPLOY / "lock-down"), str(fake_python)], capture_output=True, text=True, cwd="/"
    )
    assert proc.returncode == 0, proc.stderr
    for path in [site / "specs", *(site / "specs").rglob("*"), site / "reference", *(site / "reference").rglob("*")]:
        assert path.stat().st_uid == 0 and path.stat().st_mode & 0o077 == 0, path
