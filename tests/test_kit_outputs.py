"""Issue 26, point 6: graded with the student kit, the output folder holds the student's files
only. A kit is built here (``graphgrade student-kit``'s builder), unzipped, and its own
``graphgrade grade`` run on the template: no staff.html ("Staff view ... do not share with
students"), and for a single submission no summary.html or grades.csv (the class's files).
The full package still writes them. The pip-installed kit is checked the same way in
test_install.py (slow)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.commands import kit
from grader.commands.report_manifest import MANIFEST
from reports.outputs import GRADE, OUTPUTS, outputs

REPO = Path(__file__).resolve().parents[1]
GRAPHGRADE = Path(sys.executable).with_name("graphgrade")
STUDENT_FILES = {o.file for o in outputs(GRADE, "submission", staff=False)}  # the registry's, reports.outputs
STAFF_ONLY = {o.file for o in OUTPUTS if o.audience == "staff"}
RUN_CLI = "import sys; from grader.commands.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture(scope="module")
def unzipped_kit(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("kit")
    kit.build_student_kit(root / "graphgrade-kit.zip", REPO / "specs")
    with zipfile.ZipFile(root / "graphgrade-kit.zip") as zf:
        zf.extractall(root)
    assert (root / "graphgrade-kit" / "grader" / kit.KIT_MARKER).is_file()
    return root / "graphgrade-kit"


def _labs(where: Path, *names: str) -> None:
    for name in names:
        (where / name).mkdir()
        shutil.copy(REPO / "student_template" / "cudagraph.py", where / name / "cudagraph.py")


def _kit_grade(kit_root: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """``graphgrade`` as the kit runs it: the kit's own packages first on the path."""
    env = {**os.environ, "PYTHONPATH": str(kit_root)}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [sys.executable, "-c", RUN_CLI, "grade", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _tree(out: Path) -> dict[str, set[str]]:
    return {p.name: {f.name for f in p.iterdir()} if p.is_dir() else set() for p in out.iterdir()}


def test_the_kit_writes_the_students_files_only(unzipped_kit, tmp_path):
    _labs(tmp_path, "my-lab")
    done = _kit_grade(unzipped_kit, tmp_path, "my-lab", "--out", "out", "--no-cache")
    assert done.returncode == 0, done.stderr
    assert "graded against the public specs bundled in this student kit" in done.stderr  # the kit graded it
    assert _tree(tmp_path / "out") == {"my-lab": STUDENT_FILES}
    page = (tmp_path / "out" / "my-lab" / "report.html").read_text(encoding="utf-8")
    assert "Staff view" not in page and "Fix this first" in page


def test_a_batch_graded_with_the_kit_has_its_summary_but_no_staff_page(unzipped_kit, tmp_path):
    _labs(tmp_path, "v1", "v2")
    done = _kit_grade(unzipped_kit, tmp_path, "v1", "v2", "--out", "out", "--no-cache")
    assert done.returncode == 0, done.stderr
    tree = _tree(tmp_path / "out")
    assert tree == {"v1": STUDENT_FILES, "v2": STUDENT_FILES, "summary.html": set(), "grades.csv": set()}
    assert not (set(tree) | set().union(*tree.values())) & STAFF_ONLY  # no staff-audience output
    summary = (tmp_path / "out" / "summary.html").read_text(encoding="utf-8")
    assert "staff.html" not in summary and "v1/report.html" in summary


def test_the_full_package_still_writes_the_staff_files(tmp_path):
    _labs(tmp_path, "my-lab")
    done = subprocess.run(
        [str(GRAPHGRADE), "grade", "my-lab", "--out", "out", "--no-cache", "--visibility", "visible"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert _tree(tmp_path / "out") == {
        "my-lab": STUDENT_FILES | {"staff.html", MANIFEST},  # and what a regrade checks (report_manifest)
        "summary.html": set(),
        "grades.csv": set(),
        "answers.csv": set(),  # the class's notebook answers, for the staff
    }
