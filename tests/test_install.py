"""graphgrade installed the way users install it, each in a fresh virtual environment:

* the full package from a plain (non-editable) ``pip install .``: ``graphgrade
  gradescope-bundle`` works there, and the autograder kit inside the bundle installs and grades;
* the student kit built there (``graphgrade student-kit``) installs with ``pip install
  kit.zip``, grades the template (0) and a correct submission (full marks on the public specs),
  has no ``reference`` to import, refuses the commands that need it, and holds nothing of a
  hidden spec or of the reference solution (the whole installed tree is scanned, compiled
  files included);
* ``pytest`` in a student's folder, with either installed, runs the public cases against its
  ``cudagraph.py`` as test items (``-k``, ``--lf``, ``-v``, ``--junitxml``), and stays out of a
  folder without one; nothing of a hidden case reaches its output.

No network: each venv sees this environment's numpy, PyYAML, Jinja2, orjson and setuptools through a
``.pth`` file, and pip installs with ``--no-deps --no-build-isolation --no-index``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import kit_secrets
import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SOURCE_ITEMS = (
    "pyproject.toml",
    "README.md",
    "docs",
    "grader",
    "labs",
    "reference",
    "reports",
    "specs",
    "student_template",
)
# pytest and its own dependencies: `pytest` in a student's folder (grader.commands.pytest_plugin)
PYTEST = ("pytest", "pluggy", "iniconfig", "packaging", "Pygments")
DEPENDENCIES = ("numpy", "PyYAML", "Jinja2", "MarkupSafe", "orjson", "setuptools", *PYTEST)
CORRECT = REPO / "tests" / "correct_variants" / "minimal"


def _link_dependencies(deps: Path) -> None:
    """A site folder holding links to this environment's copies of the runtime and build
    dependencies (their dist-info included: setuptools finds its commands through it)."""
    deps.mkdir()
    for name in DEPENDENCIES:
        dist = importlib.metadata.distribution(name)
        site = Path(dist.locate_file("")).resolve()
        tops = (dist.read_text("top_level.txt") or "").split() or [name.lower()]
        files = {Path(str(f)).parts[0] for f in dist.files or []}
        for entry in sorted(files | set(tops)):
            source = site / entry
            if source.exists() and not (deps / entry).exists() and entry not in ("..", "bin", "__pycache__"):
                (deps / entry).symlink_to(source)


@pytest.fixture(scope="module")
def deps(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("deps") / "site"
    _link_dependencies(folder)
    return folder


def _venv(path: Path, deps: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    site = next((path / "lib").glob("python3*/site-packages"))
    (site / "_graphgrade_test_deps.pth").write_text(f"import site; site.addsitedir({str(deps)!r})\n")
    return path


def _pip_install(venv: Path, target: Path) -> None:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(target),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(venv / "bin" / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True, env=env, timeout=600
    )


@pytest.fixture(scope="module")
def full(tmp_path_factory, deps) -> Path:
    """A fresh venv with graphgrade from a plain ``pip install .`` of a copy of this source."""
    base = tmp_path_factory.mktemp("full")
    src = base / "src"
    src.mkdir()
    for item in SOURCE_ITEMS:
        source = REPO / item
        if source.is_dir():
            shutil.copytree(source, src / item, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, src / item)
    venv = _venv(base / "venv", deps)
    _pip_install(venv, src)
    shutil.rmtree(src)  # nothing may depend on the source tree any more
    return venv


def _site(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def test_full_install_is_not_editable(full):
    site = _site(full)
    assert (site / "grader" / "commands" / "cli.py").is_file() and (site / "reference" / "cudagraph.py").is_file()
    assert (site / "grader" / "docs" / "contract.md").is_file()
    assert not list(site.glob("__editable__*"))


def test_gradescope_bundle_after_a_plain_install(full, deps, tmp_path):
    done = _run(full, "graphgrade", "gradescope-bundle", "--output", str(tmp_path / "autograder.zip"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        names = set(zf.namelist())
        assert {
            "setup.sh",
            "run_autograder",
            "kit/pyproject.toml",
            "kit/reference/cudagraph.py",
            "kit/docs/contract.md",
            "specs/02_eager.yaml",
        } <= names
        assert not any(n.startswith("kit/specs/") and n.endswith(".yaml") for n in names)
        zf.extractall(tmp_path / "autograder")
    # What setup.sh does: pip-install kit/; what run_autograder does: grade against specs/.
    grader_venv = _venv(tmp_path / "gradescope-venv", deps)
    _pip_install(grader_venv, tmp_path / "autograder" / "kit")
    done = _run(
        grader_venv,
        "graphgrade",
        "grade",
        str(CORRECT),
        "--specs",
        str(tmp_path / "autograder" / "specs"),
        "--out",
        str(tmp_path / "out"),
        "--visibility",
        "all",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "minimal" / "results.json").read_text())
    assert results["score"] == 106 and len(results["tests"]) > 90  # the variant ships its answers.md


@pytest.fixture(scope="module")
def kit_zip(full, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kitzip")
    done = _run(full, "graphgrade", "student-kit", "--output", str(out / "graphgrade-kit.zip"), cwd=out)
    assert done.returncode == 0, done.stderr
    assert "hidden specs left out" in done.stdout
    return out / "graphgrade-kit.zip"


@pytest.fixture(scope="module")
def kit_venv(kit_zip, deps, tmp_path_factory) -> Path:
    venv = _venv(tmp_path_factory.mktemp("kitvenv") / "venv", deps)
    _pip_install(venv, kit_zip)
    return venv


def test_kit_grades_the_template_and_a_correct_submission(kit_venv, tmp_path):
    template = _site(kit_venv) / "student_template"
    shutil.copytree(template, tmp_path / "my-lab", ignore=shutil.ignore_patterns("__pycache__"))
    done = _run(kit_venv, "graphgrade", "grade", "my-lab", str(CORRECT), "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "graded against the public specs bundled in this student kit" in done.stderr
    template_report = json.loads((tmp_path / "out" / "my-lab" / "report.json").read_text())
    correct = json.loads((tmp_path / "out" / "minimal" / "report.json").read_text())
    assert template_report["score"] == 0 and template_report["max_score"] > 0
    assert correct["score"] == correct["max_score"] == template_report["max_score"]
    assert {s["visibility"] for s in correct["specs"]} == {"visible"}
    assert all(c["status"] == "passed" for c in correct["cases"]) and len(correct["cases"]) > 30
    assert not list((tmp_path / "out").glob("*/staff.html"))  # a batch in the kit: no staff page either


def test_kit_output_folder_holds_the_students_files_only(kit_venv, tmp_path):
    """The README's own commands, in the installed kit: the student's files and nothing of the
    staff's (issue 26, point 6)."""
    template = _site(kit_venv) / "student_template"
    shutil.copytree(template, tmp_path / "my-lab", ignore=shutil.ignore_patterns("__pycache__"))
    done = _run(kit_venv, "graphgrade", "grade", ".", "--out", "report", cwd=tmp_path / "my-lab")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "my-lab" / "report"
    assert [p.name for p in out.iterdir()] == ["my-lab"]
    assert sorted(p.name for p in (out / "my-lab").iterdir()) == [
        "junit.xml",
        "report.html",
        "report.json",
        "results.json",
    ]


def test_kit_has_no_reference_and_refuses_what_needs_it(kit_venv, tmp_path):
    done = _run(kit_venv, "python", "-c", "import reference", cwd=tmp_path)
    assert done.returncode != 0 and "ModuleNotFoundError: No module named 'reference'" in done.stderr
    for command in ("validate", "audit", "bench", "gradescope-bundle", "student-kit"):
        done = _run(kit_venv, "graphgrade", command, cwd=tmp_path)
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr.count("\n") == 1 and "full package" in done.stderr and "Traceback" not in done.stderr


def test_kit_holds_nothing_hidden_installed_or_zipped(kit_venv, kit_zip):
    needles = kit_secrets.needles()
    site = _site(kit_venv)
    subprocess.run(
        [str(kit_venv / "bin" / "python"), "-m", "compileall", "-q", str(site / "grader"), str(site / "specs")],
        check=False,
    )
    ours = [site / name for name in ("grader", "reports", "specs", "student_template")] + list(
        site.glob("graphgrade-*.dist-info")
    )
    assert not (site / "reference").exists()
    assert list((site / "grader").rglob("*.pyc")), "the installed tree's compiled files are scanned too"
    findings = kit_secrets.scan_zip(kit_zip, needles)
    for folder in ours:
        findings += kit_secrets.scan_tree(folder, needles)
    assert findings == []


# ------------------------------------------------------------------ pytest in a student's folder
TYPO = ("np.copyto(e.static_input, x)", "np.copyto(e.static_inputs, x)")  # a typo in GraphRunner.__call__


def _student_folder(path: Path) -> tuple[Path, int]:
    """A student's folder holding the minimal correct solution with a typo; the typo's line."""
    source = (CORRECT / "cudagraph.py").read_text(encoding="utf-8")
    assert TYPO[0] in source
    source = source.replace(*TYPO)
    path.mkdir()
    (path / "cudagraph.py").write_text(source, encoding="utf-8")
    return path, next(i for i, line in enumerate(source.splitlines(), 1) if TYPO[1] in line)


def test_pytest_in_a_student_folder_runs_each_public_case_as_an_item(kit_venv, tmp_path):
    folder, line = _student_folder(tmp_path / "lab")
    done = _run(kit_venv, "python", "-m", "pytest", "-q", "--junitxml", "junit.xml", cwd=folder)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    failed = sorted({m for m in done.stdout.split() if m.startswith("cudagraph.py::")})
    assert failed and all(m.count("::") == 2 for m in failed)  # cudagraph.py::SPEC::CASE
    # a failing item shows what report.html shows, the student's line included
    assert f"  at cudagraph.py:{line} in __call__: np.copyto(e.static_inputs, x)" in done.stdout
    assert "expected: " in done.stdout and "observed: " in done.stdout and "Traceback" not in done.stdout
    summary = done.stdout.strip().splitlines()[-1]
    n_failed = int(summary.split(" failed")[0].split()[-1])
    n_passed = int(summary.split(" passed")[0].split()[-1])
    assert n_failed == len(failed) and n_passed > 0
    junit = (folder / "junit.xml").read_text(encoding="utf-8")
    assert junit.count("<testcase ") == n_failed + n_passed and f"cudagraph.py:{line}" in junit
    # --lf: only the items that failed, run again
    again = _run(kit_venv, "python", "-m", "pytest", "-q", "--lf", cwd=folder)
    assert again.returncode == 1 and f"{n_failed} failed, {n_passed} deselected" in again.stdout, again.stdout[-2000:]
    # -k: one spec's items; -v names each
    spec = failed[0].split("::")[1]
    chosen = _run(kit_venv, "python", "-m", "pytest", "-v", "-k", spec, cwd=folder)
    items = [ln.split()[0] for ln in chosen.stdout.splitlines() if ln.startswith("cudagraph.py::")]
    assert items and all(i.split("::")[1] == spec for i in items), chosen.stdout[-2000:]
    assert "deselected" in chosen.stdout


def test_pytest_stays_out_of_a_folder_without_cudagraph(kit_venv, tmp_path):
    (tmp_path / "test_mine.py").write_text("def test_mine():\n    assert True\n", encoding="utf-8")
    done = _run(kit_venv, "python", "-m", "pytest", "-q", cwd=tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-2000:]
    assert "cudagraph.py::" not in done.stdout


def test_pytest_with_the_full_package_shows_nothing_of_a_hidden_case(full, tmp_path):
    folder, line = _student_folder(tmp_path / "lab")
    done = _run(full, "python", "-m", "pytest", "-v", "--junitxml", "junit.xml", cwd=folder)
    assert done.returncode == 1 and f"cudagraph.py:{line}" in done.stdout, done.stdout[-3000:]
    (folder / "pytest-output.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    needles = kit_secrets.needles()
    items = {ln.split()[0].split("::")[1] for ln in done.stdout.splitlines() if ln.startswith("cudagraph.py::")}
    assert items and not items & needles.hidden_ids  # only visible specs are collected
    written = [
        p for p in folder.rglob("*") if p.is_file() and p.name != "cudagraph.py" and "__pycache__" not in p.parts
    ]
    assert {"pytest-output.txt", "junit.xml", "lastfailed"} <= {p.name for p in written}
    findings = [f for p in written for f in kit_secrets.scan_bytes(p.name, p.read_bytes(), needles)]
    assert findings == []  # the output, junit.xml and .pytest_cache (the student's own file aside)


def test_kit_repro_writes_a_public_case_and_refuses_a_hidden_one(kit_venv, tmp_path):
    folder, line = _student_folder(tmp_path / "lab")
    done = _run(kit_venv, "graphgrade", "repro", "replay-basics/long-graph-one-launch", cwd=folder)
    assert done.returncode == 0, done.stderr
    script = folder.parent / f"{folder.name}-repro" / "replay-basics--long-graph-one-launch.py"  # beside, not in
    ran = _run(kit_venv, "python", str(script), cwd=folder)  # the student's interpreter, the kit's ops
    assert ran.returncode == 0 and "raised AttributeError" in ran.stdout, ran.stdout + ran.stderr
    assert f'cudagraph.py", line {line}' in ran.stderr
    needles = kit_secrets.needles()
    assert kit_secrets.scan_bytes(script.name, script.read_bytes(), needles) == []
    hidden = needles.hidden_ids
    refused = _run(kit_venv, "graphgrade", "repro", f"{sorted(hidden)[0]}/any-case", cwd=folder)
    assert refused.returncode == 2 and refused.stdout == "" and refused.stderr.count("\n") == 1, refused.stderr
    assert "hidden case" in refused.stderr and "Traceback" not in refused.stderr
