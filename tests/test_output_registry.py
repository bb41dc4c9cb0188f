"""Issue 32, point 5: every output format is one row of one registry (reports.outputs) that
grade, merge and prairielearn write through. Grade and merge write every output registered for
them, with the same bytes for the same class; a student's own run (the kit) writes the
student-audience outputs only (the kit itself: tests/test_kit_outputs.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_reports_samples import failing_report, hidden_report, passing_report

from grader.commands import report_manifest
from grader.commands.grade import _write_outputs
from reports.outputs import (
    COMMANDS,
    GRADE,
    MERGE,
    OUTPUTS,
    PRAIRIELEARN,
    Batch,
    batch_texts,
    outputs,
    submission_files,
    submission_texts,
)

ROOT = Path(__file__).resolve().parents[1]


def test_the_registry_names_each_output_once_with_its_audience():
    assert len({o.id for o in OUTPUTS}) == len(OUTPUTS)
    assert all(o.commands and set(o.commands) <= set(COMMANDS) for o in OUTPUTS)
    assert all(o.audience in ("student", "staff") and o.scope in ("submission", "batch") for o in OUTPUTS)
    # the staff's pages never reach a student: the two outputs that hold what students may not see
    assert {o.file for o in OUTPUTS if o.audience == "staff"} == {"staff.html", "answers.csv"}
    assert submission_files(GRADE) == ("report.json", "report.html", "staff.html", "results.json", "junit.xml")
    assert submission_files(GRADE, staff=False) == ("report.json", "report.html", "results.json", "junit.xml")
    assert submission_files(MERGE) == submission_files(GRADE)
    assert submission_files(PRAIRIELEARN) == ("results.json",)
    with pytest.raises(ValueError, match="unknown command 'export'"):
        outputs("export", "submission")


def test_a_students_run_renders_the_student_audience_only():
    report = hidden_report()
    student = submission_texts(report, staff=False)
    assert set(student) == {o.file for o in OUTPUTS if GRADE in o.commands and o.scope == "submission"} - {"staff.html"}
    assert "Staff view" not in student["report.html"] and "Staff view" in submission_texts(report)["staff.html"]
    batch = Batch((report,), ("a/report.html",), ("a",), ("a/staff.html",))
    assert set(batch_texts(batch, staff=False)) == {"summary.html", "grades.csv"}


def test_grade_writes_what_the_registry_lists(tmp_path):
    for staff in (True, False):
        out = tmp_path / str(staff)
        assert _write_outputs(failing_report(), out, staff=staff) == len(submission_files(GRADE, staff))
        assert {p.name for p in out.iterdir()} - {report_manifest.MANIFEST} == set(submission_files(GRADE, staff))


def test_answers_csv_is_written_only_when_a_report_holds_answers():
    plain = Batch((passing_report(),), ("a/report.html",), ("a",), ("",))
    assert "answers.csv" not in batch_texts(plain)


def _cli(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", *args], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_grade_and_merge_write_every_registered_output_with_the_same_bytes(tmp_path):
    """One class graded as its only shard, then merged: merge re-renders the class's files from
    the report.json files it read back and copies the rest; every output registered for both is
    in both folders, byte for byte (the reference's notebook answers make answers.csv)."""
    broken = tmp_path / "broken"
    broken.mkdir()
    source = (ROOT / "reference" / "cudagraph.py").read_text()
    (broken / "cudagraph.py").write_text(source.replace("        cls.n = 0\n", "        pass\n", 1))
    graded, merged = tmp_path / "graded", tmp_path / "merged"
    _cli(
        "grade",
        str(ROOT / "reference"),
        str(broken),
        "--out",
        str(graded),
        "--no-cache",
        "--shard",
        "1/1",
        "--no-similarity",
    )
    _cli("merge", str(graded), "--out", str(merged), "--no-similarity")  # a shard compares nothing
    names = sorted(p.name for p in graded.iterdir() if p.is_dir())
    assert names == ["broken", "reference"]
    both = [o for o in OUTPUTS if GRADE in o.commands and MERGE in o.commands]
    assert {o.file for o in both} >= {"report.json", "staff.html", "summary.html", "grades.csv", "answers.csv"}
    for o in both:
        where = [Path(name) / o.file for name in names] if o.scope == "submission" else [Path(o.file)]
        for rel in where:
            assert (graded / rel).is_file(), f"grade wrote no {rel}"
            assert (merged / rel).read_bytes() == (graded / rel).read_bytes(), f"{rel} differs"
