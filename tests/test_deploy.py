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
    # its last line names what it leaves, not the scratch folder graphgrade wrote to (removed on exit)
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"run_autograder: wrote {root / 'results' / 'results.json'} ")
    named = re.findall(r"(/[^\s()]+)", last)
    assert named and all(Path(p.rstrip("/.")).exists() for p in named), last


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


def dockerfile_stages() -> dict[str, list[str]]:
    """``{stage name: its instruction lines}`` of deploy/Dockerfile (continuation lines joined)."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    stages: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("FROM "):
            current = line.split(" AS ")[-1].strip() if " AS " in line else f"stage{len(stages)}"
            stages[current] = [line]
        elif current is not None and line.strip() and not line.startswith("#"):
            stages[current].append(line)
    return stages


def copied_sources(stage: list[str]) -> list[tuple[str, str]]:
    """``(source, destination)`` of each plain COPY of a stage (not ``COPY --from``)."""
    pairs = []
    for line in stage:
        words = line.split()
        if words[0] == "COPY" and not words[1].startswith("--"):
            *sources, dest = words[1:]
            pairs += [(src, dest.rstrip("/") + "/" + Path(src).name if dest.endswith("/") else dest) for src in sources]
    return pairs


def pyproject_needs() -> set[str]:
    """The top-level source folders and files ``pip install .`` reads, from pyproject.toml."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = project["tool"]["setuptools"]
    mapped = setuptools.get("package-dir", {})
    needs = {"pyproject.toml", project["project"]["readme"]}
    for package in setuptools["packages"]:
        top = next((mapped[p] for p in mapped if package == p or package.startswith(p + ".")), package)
        needs.add(top.split("/")[0].split(".")[0])
    return needs


def test_dockerfile_build_stage_copies_what_pyproject_needs():
    stages = dockerfile_stages()
    assert list(stages)[-1] == "image" and "with-specs" in stages and "build" in stages
    build = copied_sources(stages["build"])
    installed = {
        dest.removeprefix("/tmp/graphgrade-src/") for _, dest in build if dest.startswith("/tmp/graphgrade-src/")
    }
    assert pyproject_needs() <= installed, pyproject_needs() - installed
    for src, _ in build:
        assert (ROOT / src).exists(), src
    build_text = "\n".join(stages["build"])
    assert "pip install /tmp/graphgrade-src" in build_text and "graphgrade-strip-install" in build_text


def test_the_default_image_holds_no_spec_and_no_reference():
    stages = dockerfile_stages()
    # the default target (the last stage) is the grader stage: it copies the stripped venv and
    # the entry script, nothing of the source tree
    assert stages["image"] == ["FROM grader AS image"]
    grader_stage = stages["grader"]
    assert [line for line in grader_stage if line.startswith("COPY ")] == [
        "COPY --from=build /opt/graphgrade /opt/graphgrade",
        "COPY deploy/run_autograder /autograder/run_autograder",
    ]
    assert not any("GRAPHGRADE_SPECS" in line for line in grader_stage)
    # the specs go into the named private target only, with its warning
    assert copied_sources(stages["with-specs"]) == [("specs", "/opt/graphgrade-specs")]
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert "--target with-specs" in text and "PRIVATE registry only" in text
    assert "/usr/local/bin/graphgrade prairielearn" in text
    # nothing fetched at grading time: the entry scripts never install or download
    for script in ("run_autograder", "lock-down", "strip-install"):
        body = (DEPLOY / script).read_text(encoding="utf-8")
        assert not re.search(r"\b(pip3?|apt-get|apt|curl|wget|git)\b", body), script


@pytest.mark.slow
def test_the_dockerfile_file_set_installs_and_strips_to_a_grader_without_secrets(tmp_path):
    """The build stage's COPY lines, copied as Docker would, installed with a plain pip install
    into a fresh venv, then stripped as the image is (Docker itself is not needed)."""
    from test_install import _link_dependencies, _pip_install, _site, _venv

    context = tmp_path / "graphgrade-src"
    context.mkdir()
    for src, dest in copied_sources(dockerfile_stages()["build"]):
        if not dest.startswith("/tmp/graphgrade-src/"):
            continue
        target = context / dest.removeprefix("/tmp/graphgrade-src/")
        if (ROOT / src).is_dir():
            shutil.copytree(ROOT / src, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / src, target)
    deps = tmp_path / "deps"
    _link_dependencies(deps)
    venv = _venv(tmp_path / "venv", deps)
    _pip_install(venv, context)  # a folder the Dockerfile leaves out fails here
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    cli = [str(venv / "bin" / "graphgrade")]
    done = subprocess.run(
        [*cli, "validate", "--specs", str(context / "specs")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr  # the build stage's check
    done = subprocess.run(
        ["bash", str(DEPLOY / "strip-install"), str(venv / "bin" / "python")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    shutil.rmtree(context)
    site = _site(venv)
    files = [p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()]
    assert not [f for f in files if f.startswith(("reference/", "specs/")) and f != "specs/__init__.py"]
    # a lab's lab.yaml describes the lab (behaviours, entry points, where its files are): no spec
    lab_files = [f for f in files if f.startswith("labs/") and f.endswith("/lab.yaml")]
    assert not [f for f in files if (f.endswith((".yaml", ".yml")) and f not in lab_files) or "mutants" in f]
    reference_lines = {
        line.strip()
        for line in REFERENCE.read_text(encoding="utf-8").splitlines()
        if len(line.strip()) > 40 and not line.strip().startswith(("#", '"', "def ", "class "))
    }
    template = (ROOT / "student_template" / "cudagraph.py").read_text(encoding="utf-8")
    distinctive = {line for line in reference_lines if line not in template}
    assert distinctive
    for path in site.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not any(line in text for line in distinctive), path
    # and it still grades, against specs that come with the job, and says where it found none
    job = grade_tree(tmp_path, REFERENCE.read_text(encoding="utf-8"))
    done = subprocess.run(
        [*cli, "prairielearn", "--root", str(job)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((job / "results" / "results.json").read_text(encoding="utf-8"))["score"] == 1.0
    assert f"specs: {job / 'tests'} (the job's tests/): " in done.stderr
    done = subprocess.run(
        [*cli, "grade", str(job / "student"), "--out", str(tmp_path / "out"), "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 2 and "this install holds no specs" in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run([*cli, "validate"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 2 and "reference" in done.stderr and len(done.stderr.strip().splitlines()) == 1


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
