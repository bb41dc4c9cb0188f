"""Output names and the batch's final writes (issue 25, point 5): every submission's folder name
is bounded and unique after sanitising (hash-suffixed when cut), and summary.html and
grades.csv are written whatever one submission's name or report does to the renderers."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

from test_reports_samples import passing_report

from grader.commands import grade
from grader.commands.grade import MAX_NAME_CHARS, GradedSubmission, submission_name, unique_names

ROOT = Path(__file__).resolve().parents[1]
HONEST = ROOT / "tests" / "correct_variants" / "minimal" / "cudagraph.py"


def test_long_names_are_cut_with_a_hash_of_the_whole_name(tmp_path):
    a, b = tmp_path / ("a" * 250 + "x"), tmp_path / ("a" * 250 + "y")
    for p in (a, b):
        p.mkdir()
    name_a, name_b = submission_name(a), submission_name(b)
    assert len(name_a) <= MAX_NAME_CHARS and len(name_b) <= MAX_NAME_CHARS
    assert name_a != name_b and name_a.startswith("a" * 40)
    short = tmp_path / "alice"
    short.mkdir()
    assert submission_name(short) == "alice"  # a name that fits is as before


def test_equal_long_names_stay_unique_and_fit_a_file_name(tmp_path):
    paths = []
    for parent in ("p1", "p2", "p3"):
        p = tmp_path / parent / ("b" * 255)
        p.mkdir(parents=True)
        paths.append(p)
    names = unique_names(paths)
    assert len(set(names)) == 3
    assert all(len(n.encode()) <= 255 for n in names)


def test_two_255_byte_folder_names_grade_and_write_the_batch_files(tmp_path):
    """The reproduction: two folders of the same 255-byte name ended the batch with
    "internal error: OSError: File name too long" and no summary.html or grades.csv."""
    long = "a" * 255
    subs = []
    for parent in ("p1", "p2"):
        folder = tmp_path / parent / long
        folder.mkdir(parents=True)
        shutil.copy(HONEST, folder / "cudagraph.py")
        subs.append(str(folder))
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(ROOT / "specs" / "01_launch_counter.yaml", specs)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "grader.commands.cli", "grade", *subs, "--out", str(out), "--no-cache"]
    cmd += ["--no-similarity", "--specs", str(specs)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr
    assert (out / "summary.html").is_file()
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == 3 and rows[1][0] != rows[2][0]
    assert rows[1][-2] == rows[1][-1] and rows[2][-2] == rows[2][-1]  # both scored in full
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == 2 and all((p / "report.html").is_file() for p in folders)


def test_the_batch_files_are_written_when_the_summary_cannot_be(tmp_path, monkeypatch):
    """Should summary.html's renderer fail for the whole batch, plain batch files are still
    written, listing every submission, and every submission is marked as the grader's failure."""
    import reports

    def broken(*args, **kwargs):
        raise OSError(36, "File name too long")

    monkeypatch.setattr(reports, "write_batch_outputs", broken)
    graded = []
    for name in ("alice", "bob"):
        (tmp_path / name).mkdir()
        graded.append(GradedSubmission(tmp_path / name, name, passing_report(name), tmp_path / name))

    def problem_report(index, message):
        return graded[index].report

    result = grade._write_batch(graded, tmp_path, problem_report, ["alice", "bob"])
    assert all(g.grader_failed for g in result)
    page = (tmp_path / "summary.html").read_text()
    assert "alice" in page and "bob" in page and "File name too long" in page
    rows = list(csv.reader((tmp_path / "grades.csv").read_text().splitlines()))
    assert [r[0] for r in rows] == ["submission", "alice", "bob"]
