"""Which specs a command reads: inside a checkout its specs/, elsewhere the installed suite,
--specs always; and every command says which, with the folder's counts, on one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.commands import spec_source
from grader.commands.cli import main
from grader.suite.loader import load_suite

ROOT = Path(__file__).resolve().parents[1]
GRAPHGRADE = Path(sys.executable).parent / "graphgrade"  # the installed console script
NEW_CASE = """    cases:
      - id: instructors-new-case
        description: Two relus cost two launches (added by the instructor, no reinstall).
        steps:
          - call: run_eager
            as: out
            args: [{ops: [relu, relu]}, {array: {shape: [2, 3], dtype: float32, seed: 7}}]
        checks:
          - launches: {step: out, equals: 2}
          - output: {step: out, oracle: true, shape: [2, 3]}

"""


def checkout_copy(base: Path, packages: tuple[str, ...] = ()) -> Path:
    """A copy of what makes a checkout: pyproject.toml beside specs/ (and ``packages``, so that
    an interpreter given it as PYTHONPATH runs graphgrade from it, as from an editable install)."""
    copy = base / "course-checkout"
    copy.mkdir()
    shutil.copy(ROOT / "pyproject.toml", copy)
    for name in ("specs", *packages):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


@pytest.fixture
def installed_from(monkeypatch):
    """``installed_from(folder)``: graphgrade runs as if its package came from ``folder``."""
    from grader import trusted_path

    return lambda folder: monkeypatch.setattr(trusted_path, "own_source_root", lambda: Path(folder).resolve())


def add_case(specs: Path) -> None:
    path = specs / "02_eager.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.count("    cases:\n") >= 1
    path.write_text(text.replace("    cases:\n", NEW_CASE, 1), encoding="utf-8")


def test_find_checkout_only_graphgrades_own_tree(tmp_path, installed_from):
    copy = checkout_copy(tmp_path)
    deep = copy / "specs" / "more" / "deeper"
    deep.mkdir(parents=True)
    assert spec_source.find_checkout(deep) is None  # it looks like one, but graphgrade did not come from it
    installed_from(copy)
    assert spec_source.find_checkout(deep) == copy.resolve()
    assert spec_source.find_checkout(tmp_path) is None
    # never a checkout that is, or lies under, a folder being graded
    assert spec_source.find_checkout(deep, graded=[copy]) is None
    assert spec_source.find_checkout(deep, graded=[tmp_path]) is None
    assert spec_source.find_checkout(deep, graded=[copy / "specs"]) == copy.resolve()
    other = tmp_path / "other"
    (other / "specs").mkdir(parents=True)
    (other / "pyproject.toml").write_text('[project]\nname = "not-graphgrade"\n', encoding="utf-8")
    installed_from(other)
    assert spec_source.find_checkout(other / "specs") is None
    installed_from(copy)
    (copy / "specs").rename(copy / "spec-files")  # a pyproject naming graphgrade, but no specs/ beside it
    assert spec_source.find_checkout(copy) is None


def test_default_specs_inside_a_checkout_and_elsewhere(tmp_path, monkeypatch, installed_from):
    copy = checkout_copy(tmp_path)
    installed_from(copy)
    monkeypatch.chdir(copy / "specs")
    assert spec_source.default_specs() == spec_source.SpecSource(copy.resolve() / "specs", spec_source.CHECKOUT)
    monkeypatch.chdir(tmp_path)
    chosen = spec_source.default_specs()
    assert chosen.how == spec_source.BUNDLED and chosen.path == spec_source.bundled_specs_dir()
    assert spec_source.choose(tmp_path) == spec_source.SpecSource(tmp_path, spec_source.GIVEN)


def test_specs_line_names_folder_origin_and_counts(tmp_path):
    copy = checkout_copy(tmp_path)
    loaded = load_suite(copy / "specs")
    line = spec_source.specs_line(spec_source.SpecSource(copy / "specs", spec_source.CHECKOUT), loaded)
    suite = loaded.suite
    points = sum(s.points for s in suite.specs)
    assert line == (
        f"graphgrade: specs: {copy / 'specs'} (this checkout's specs/): {len(suite.files)} files, "
        f"{len(suite.specs)} specs, {len(suite.cases)} cases, {points:g} points"
    )


def test_validate_in_a_checkout_counts_its_new_case_and_specs_wins(tmp_path, monkeypatch, capsys, installed_from):
    copy = checkout_copy(tmp_path)
    installed_from(copy)
    shipped = len(load_suite(ROOT / "specs").suite.cases)
    add_case(copy / "specs")
    monkeypatch.chdir(copy)
    assert main(["validate"]) == 0
    out, err = capsys.readouterr()
    assert f"specs: {copy.resolve() / 'specs'} (this checkout's specs/)" in err
    assert f"{shipped + 1} cases" in err and f"{shipped + 1} cases" in out
    assert main(["validate", "--specs", str(ROOT / "specs")]) == 0  # --specs wins over the checkout
    err = capsys.readouterr().err
    assert f"specs: {ROOT / 'specs'} (given with --specs): " in err and f"{shipped} cases" in err


def _run(*args: str, cwd: Path, source: Path | None = None) -> subprocess.CompletedProcess:
    """The console script, run in ``cwd``; from the source tree ``source`` when given."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    return subprocess.run(
        [str(GRAPHGRADE), *args], capture_output=True, text=True, timeout=600, cwd=cwd, env={**env, "HOME": str(cwd)}
    )


def test_an_instructors_new_case_reaches_every_command_without_a_reinstall(tmp_path):
    if not GRAPHGRADE.is_file():
        pytest.skip("graphgrade's console script is not installed beside this interpreter")
    copy = checkout_copy(tmp_path, packages=("grader", "labs", "reference", "reports", "student_template", "docs"))
    add_case(copy / "specs")
    n = len(load_suite(copy / "specs").suite.cases)
    where = f"specs: {copy.resolve() / 'specs'} (this checkout's specs/): "

    done = _run("validate", cwd=copy, source=copy)
    assert done.returncode == 0, done.stderr
    assert where in done.stderr and f"{n} cases" in done.stdout

    done = _run("student-kit", "--output", str(tmp_path / "kit.zip"), cwd=copy, source=copy)
    assert done.returncode == 0, done.stderr
    assert where in done.stderr
    with zipfile.ZipFile(tmp_path / "kit.zip") as kit:
        assert "instructors-new-case" in kit.read("graphgrade-kit/specs/02_eager.yaml").decode()

    done = _run("gradescope-bundle", "--output", str(tmp_path / "autograder.zip"), cwd=copy, source=copy)
    assert done.returncode == 0, done.stderr
    assert where in done.stderr
    with zipfile.ZipFile(tmp_path / "autograder.zip") as bundle:
        assert "instructors-new-case" in bundle.read("specs/02_eager.yaml").decode()

    submission = tmp_path / "student"
    submission.mkdir()
    shutil.copy(ROOT / "reference" / "cudagraph.py", submission)
    args = ("grade", str(submission), "--out", str(tmp_path / "out"), "--no-cache", "--no-similarity")
    done = _run(*args, cwd=copy, source=copy)
    assert done.returncode == 0, done.stderr
    assert where in done.stderr and f"against {n} cases" in done.stderr
    report = json.loads((tmp_path / "out" / "student" / "report.json").read_text(encoding="utf-8"))
    graded = [c for c in report["cases"] if "instructors-new-case" in json.dumps(c)]
    assert len(graded) == 1 and graded[0]["status"] == "passed"


def test_in_a_student_kit_the_default_is_the_kits_public_specs(tmp_path, monkeypatch):
    from grader.commands import kit_marker

    monkeypatch.setattr(kit_marker, "kit_info", lambda: {"format": 1})
    monkeypatch.chdir(checkout_copy(tmp_path))  # even inside a checkout: a kit grades its own public specs
    assert spec_source.default_specs() == spec_source.SpecSource(spec_source.bundled_specs_dir(), spec_source.KIT)


def test_audit_says_which_specs_it_read(tmp_path, monkeypatch, capsys, installed_from):
    from grader.commands import audit
    from grader.judging.audit_results import AuditResult

    def fake_run_audit(specs_dir, jobs, load):
        load(specs_dir)  # the audit loads its specs through this
        return AuditResult((), (), (), ())

    monkeypatch.setattr(audit, "run_audit", fake_run_audit)
    monkeypatch.chdir(checkout_copy(tmp_path))
    installed_from(Path.cwd())
    assert main(["audit"]) == 0
    assert f"graphgrade: specs: {Path.cwd() / 'specs'} (this checkout's specs/): " in capsys.readouterr().err


def test_prairielearn_says_which_specs_the_job_brought(tmp_path, capsys):
    job = tmp_path / "grade"
    (job / "student").mkdir(parents=True)
    shutil.copy(ROOT / "reference" / "cudagraph.py", job / "student")
    (job / "tests").mkdir()
    shutil.copy(ROOT / "specs" / "02_eager.yaml", job / "tests")
    assert main(["prairielearn", "--root", str(job)]) == 0
    err = capsys.readouterr().err
    assert f"graphgrade: specs: {job / 'tests'} (the job's tests/): 1 file, 2 specs, " in err
