"""`graphgrade export canvas|moodle`: grade files from a graded batch and the LMS's own roster."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from grader.commands.lms_export import match_key, read_roster
from grader.judging.report_writing import write_report
from grader.judging.results import Report, SpecSummary

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "CUDA graphs lab (48213)"

# A Canvas "Export Entire Gradebook" file as Canvas writes it: a byte-order mark, quoted names
# with commas, a Points Possible row, a posting-policy row, two sections (one student in both),
# the Test Student, read-only total columns, CRLF line ends.
CANVAS_EXPORT = (
    "\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (48100),CUDA graphs lab (48213),Current Score,Final Score\r\n"
    "    Points Possible,,,,,10.00,50.00,(read only),(read only)\r\n"
    ",,,,,,Manual Posting,,\r\n"
    '"Doe, Jane",1001,S0001,jdoe,CS 240 - L01,9.00,,90.00,45.00\r\n'
    '"O\'Brien, Seán",1002,S0002,sobrien,"CS 240 - L01, CS 240 - L02",7.50,,75.00,37.50\r\n'
    '"Nguyen, Bao",1003,S0003,bnguyen,CS 240 - L02,10.00,,100.00,50.00\r\n'
    '"=HYPERLINK(""http://x""), Eve",1004,S0004,eve.adams@uni.edu,CS 240 - L02,,,,\r\n'
    '"Park, Min",1005,S0005,mpark,CS 240 - L02,8.00,,80.00,40.00\r\n'
    '"Student, Test",1099,,5c1e7a0b9d,CS 240 - L01,,,,\r\n'
)


def make_out(tmp_path: Path, scores: dict[str, float], max_score: float = 100.0) -> Path:
    """A `graphgrade grade --out` folder: OUT/<name>/report.json, plus the batch files."""
    out = tmp_path / "out"
    for name, score in scores.items():
        spec = SpecSummary("s", "A spec", "eager", max_score, "visible", "", "", score, max_score)
        (out / name).mkdir(parents=True)
        write_report(Report(name, score, max_score, (), (spec,)), out / name / "report.json")
    (out / "summary.html").write_text("<html></html>", encoding="utf-8")
    return out


LOGIN = ("--match-column", "SIS Login ID")  # the roster column these tests' folder names hold


def export(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "export", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def rows(text: str, delimiter: str = ",") -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


@pytest.fixture
def gradebook(tmp_path) -> Path:
    path = tmp_path / "2026-11-30T1012_Grades-CS_240.csv"
    path.write_bytes(CANVAS_EXPORT.encode("utf-8"))
    return path


def test_canvas_import_file_from_a_real_gradebook_export(tmp_path, gradebook):
    # Folder names as `graphgrade grade` makes them: an e-mail login becomes eve.adams_uni.edu;
    # case differs; one submission matches no one; the Test Student never submits.
    out = make_out(
        tmp_path, {"jdoe": 100.0, "SOBRIEN": 57.5, "eve.adams_uni.edu": 12.25, "mpark": 0.0, "zz_unknown": 80.0}
    )
    target = tmp_path / "canvas" / "import.csv"
    proc = export(
        "canvas", str(out), "--roster", str(gradebook), "--assignment", ASSIGNMENT, "--output", str(target), *LOGIN
    )
    assert proc.returncode == 1, proc.stderr  # a graded submission is not in the file
    assert proc.stdout == ""
    got = rows(target.read_text(encoding="utf-8"))
    assert got[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ASSIGNMENT]
    assert got[1] == ["    Points Possible", "", "", "", "", "50"]
    # scaled to the gradebook's 50 points possible, in the roster's order; the name that starts
    # with "=" is disarmed (formula injection) and the IDs Canvas matches on are untouched
    assert got[2:] == [
        ["Doe, Jane", "1001", "S0001", "jdoe", "CS 240 - L01", "50"],
        ["O'Brien, Seán", "1002", "S0002", "sobrien", "CS 240 - L01, CS 240 - L02", "28.75"],
        ['\'=HYPERLINK("http://x"), Eve', "1004", "S0004", "eve.adams@uni.edu", "CS 240 - L02", "6.125"],
        ["Park, Min", "1005", "S0005", "mpark", "CS 240 - L02", "0"],
    ]
    # nothing dropped silently: the stray submission and the student without one, on stderr and beside
    assert "submission 'zz_unknown' not exported: no student has SIS Login ID 'zz_unknown'" in proc.stderr
    assert "no submission for 'Nguyen, Bao' (SIS Login ID 'bnguyen', CS 240 - L02)" in proc.stderr
    assert "Student, Test" not in proc.stderr
    assert "scaled to the gradebook's 50 points possible" in proc.stderr
    assert "4 of 5 submissions matched; 1 unmatched, 1 students without a submission" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "graphgrade: 1 graded submission(s) not in the grade file: zz_unknown (matched on 'SIS Login ID'; see the lines above)"
    )
    side = rows((tmp_path / "canvas" / "import.unmatched.csv").read_text(encoding="utf-8"))
    assert side == [
        ["problem", "submission", "student", "SIS Login ID", "detail"],
        ["submission matches no student", "zz_unknown", "", "", "no student has SIS Login ID 'zz_unknown'"],
        ["student has no submission", "", "Nguyen, Bao", "bnguyen", "CS 240 - L02"],
    ]


def test_canvas_semicolons_and_a_new_column_to_stdout(tmp_path, gradebook):
    semi = tmp_path / "grades-semicolon.csv"
    buf = io.StringIO()  # the same gradebook as Canvas writes it with "Use semicolons" on
    csv.writer(buf, delimiter=";", lineterminator="\r\n").writerows(rows(CANVAS_EXPORT.lstrip("\ufeff")))
    semi.write_bytes(("\ufeff" + buf.getvalue()).encode("utf-8"))
    out = make_out(tmp_path, {"jdoe": 80.0, "bnguyen": 95.5})
    proc = export("canvas", str(out), "--roster", str(semi), "--assignment", "Lab 2", "--new-column", *LOGIN)
    assert proc.returncode == 0, proc.stderr
    assert "warning: --assignment 'Lab 2' is not a column of grades-semicolon.csv" in proc.stderr
    got = rows(proc.stdout, ";")
    assert got[0][-1] == "Lab 2"
    assert got[1] == ["    Points Possible", "", "", "", "", "100"]  # a new column: points as graded
    assert [r[3] for r in got[2:]] == ["jdoe", "bnguyen"]
    assert [r[-1] for r in got[2:]] == ["80", "95.5"]
    assert got[2][0] == "Doe, Jane"
    assert proc.stderr.count("no submission for") == 3  # sobrien, eve, mpark; never the Test Student


def test_github_classroom_names_through_prefix_and_map(tmp_path, gradebook):
    out = make_out(tmp_path, {"cuda-lab-janedoe-gh": 90.0, "cuda-lab-bao99": 70.0})
    classroom = tmp_path / "classroom_roster.csv"
    classroom.write_text(
        '"identifier","github_username","github_id","name"\n"jdoe","janedoe-gh","1","Jane"\n"bnguyen","bao99","2","Bao"\n',
        encoding="utf-8",
    )
    proc = export(
        "canvas",
        str(out),
        "--roster",
        str(gradebook),
        "--assignment",
        ASSIGNMENT,
        "--prefix",
        "cuda-lab-",
        "--map",
        str(classroom),
        "--map-from",
        "github_username",
        "--map-to",
        "identifier",
        *LOGIN,
    )
    assert proc.returncode == 0, proc.stderr
    got = rows(proc.stdout)
    assert [(r[3], r[-1]) for r in got[2:]] == [("jdoe", "45"), ("bnguyen", "35")]


def test_two_submissions_for_one_student_are_both_reported(tmp_path, gradebook):
    out = make_out(tmp_path, {"jdoe": 90.0, "JDoe-2": 10.0, "jDOE": 50.0})
    proc = export("canvas", str(out), "--roster", str(gradebook), "--assignment", ASSIGNMENT, *LOGIN)
    got = rows(proc.stdout)
    assert proc.returncode == 1 and "2 graded submission(s) not in the grade file: JDoe-2, jdoe" in proc.stderr
    assert [r[3] for r in got[2:]] == ["jdoe"]
    assert "submission 'jdoe' not exported: SIS Login ID 'jdoe' is already matched by submission 'jDOE'" in proc.stderr
    assert "submission 'JDoe-2' not exported: no student has SIS Login ID 'JDoe-2'" in proc.stderr


def test_moodle_import_file(tmp_path):
    roster = tmp_path / "moodle-grades.csv"
    roster.write_text(
        '"First name","Last name","ID number","Institution","Department","Email address","Assignment: Lab (Real)","Last downloaded from this course"\n'
        '"Jane","Doe","S0001","Uni","CS","jdoe@uni.edu","-","1764497520"\n'
        '"Bao","Nguyen","S0003","Uni","CS","bnguyen@uni.edu","-","1764497520"\n',
        encoding="utf-8",
    )
    out = make_out(tmp_path, {"jdoe_uni.edu": 77.0, "ghost_uni.edu": 10.0})
    target = tmp_path / "moodle.csv"
    proc = export(
        "moodle",
        str(out),
        "--roster",
        str(roster),
        "--assignment",
        "CUDA graphs lab",
        "--output",
        str(target),
        "--points-possible",
        "20",
        "--new-column",
        "--match-column",
        "Email address",
    )
    assert proc.returncode == 1, proc.stderr  # ghost_uni.edu is graded and not in the file
    assert rows(target.read_text(encoding="utf-8")) == [["Email address", "CUDA graphs lab"], ["jdoe@uni.edu", "15.4"]]
    assert "submission 'ghost_uni.edu' not exported" in proc.stderr
    assert "no submission for 'bnguyen@uni.edu'" in proc.stderr
    assert (tmp_path / "moodle.unmatched.csv").is_file()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--match-column", "Login"], "no column 'Login'"),
        (["--points-possible", "-3"], "--points-possible must be a positive number"),
    ],
)
def test_bad_arguments_are_one_line(tmp_path, gradebook, args, message):
    out = make_out(tmp_path, {"jdoe": 1.0})
    proc = export("canvas", str(out), "--roster", str(gradebook), *args)
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_an_unreadable_report_is_listed_not_dropped(tmp_path, gradebook):
    out = make_out(tmp_path, {"jdoe": 100.0})
    (out / "broken").mkdir()
    (out / "broken" / "report.json").write_text("{not json", encoding="utf-8")
    proc = export("canvas", str(out), "--roster", str(gradebook), "--assignment", ASSIGNMENT, *LOGIN)
    assert proc.returncode == 1 and "1 graded submission(s) not in the grade file" in proc.stderr
    assert "broken/report.json: not valid JSON" in proc.stderr and "(not exported)" in proc.stderr
    assert [r[3] for r in rows(proc.stdout)[2:]] == ["jdoe"]


def test_roster_reading_and_keys(tmp_path, gradebook):
    roster = read_roster(gradebook, ["SIS Login ID"])
    assert roster.header[0] == "Student"  # BOM gone
    assert roster.points_possible[ASSIGNMENT] == "50.00"
    assert [r["SIS Login ID"] for r in roster.rows] == [
        "jdoe",
        "sobrien",
        "bnguyen",
        "eve.adams@uni.edu",
        "mpark",
        "5c1e7a0b9d",
    ]
    assert match_key("Jane.Doe@Uni.edu") == match_key("jane.doe_uni.edu")


@pytest.mark.parametrize("lms", ["canvas", "moodle"])
def test_a_mistyped_assignment_is_refused_naming_the_columns_and_the_closest(tmp_path, gradebook, lms):
    out = make_out(tmp_path, {"jdoe": 100.0})
    if lms == "canvas":
        roster, typo, right = gradebook, "CUDA graphs lab (48123)", ASSIGNMENT
        columns = "'Quiz 1 (48100)', 'CUDA graphs lab (48213)'"  # not the IDs, not the read-only totals
    else:
        roster = tmp_path / "moodle.csv"
        roster.write_text(
            '"First name","Last name","Email address","Assignment: Lab (Real)","Quiz: One (Real)","Course total (Real)"\n'
            '"Jane","Doe","jdoe","-","-","-"\n',
            encoding="utf-8",
        )
        typo, right = "Assignment: Lab (Reel)", "Assignment: Lab (Real)"
        columns = "'Assignment: Lab (Real)', 'Quiz: One (Real)'"  # not the course total Moodle computes
    target = tmp_path / "import.csv"
    match = ["--match-column", "SIS Login ID" if lms == "canvas" else "Email address"]

    def run(*args: str) -> subprocess.CompletedProcess:
        return export(*args, *match)

    proc = run(lms, str(out), "--roster", str(roster), "--assignment", typo, "--output", str(target))
    assert proc.returncode == 2 and not target.exists() and "Traceback" not in proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1
    assert f"--assignment {typo!r} is not a column of {roster.name} (its assignment columns: {columns}" in line
    assert f"the closest is {right!r}" in line and "--new-column" in line
    proc = run(lms, str(out), "--roster", str(roster), "--assignment", right)  # the right name: no warning
    assert proc.returncode == 0 and "warning" not in proc.stderr and right in proc.stdout.splitlines()[0]
    proc = run(lms, str(out), "--roster", str(roster), "--assignment", typo, "--new-column")
    assert proc.returncode == 0, proc.stderr
    assert f"warning: --assignment {typo!r} is not a column" in proc.stderr and typo in proc.stdout.splitlines()[0]
    identity = "Student" if lms == "canvas" else "Email address"  # a column, but not an assignment
    for extra in ((), ("--new-column",)):
        proc = run(lms, str(out), "--roster", str(roster), "--assignment", identity, *extra, "--output", str(target))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert f"--assignment {identity!r} is a column of {roster.name} that is not an assignment" in proc.stderr


# ------------------------------------------------------------------ after `graphgrade import`
MOODLE_WORKSHEET = (
    "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
    "Last modified (submission),Last modified (grade),Feedback comments\n"
    '"Participant 1234567","Jane Doe",jdoe@uni.edu,"Submitted for grading",,20.00,Yes,"Monday, 1 March 2026, 11:10 PM",-,\n'
    '"Participant 1234568","Seán O\'Brien",sobrien@uni.edu,"Submitted for grading",,20.00,Yes,"Monday, 1 March 2026, 11:11 PM",-,\n'
    '"Participant 1234569","Bao Nguyen",bnguyen@uni.edu,"No submission",,20.00,Yes,-,-,\n'
    '"Participant 1234570","Min Park",mpark@uni.edu,"Submitted for grading",,20.00,Yes,"Monday, 1 March 2026, 11:12 PM",-,\n'
)


def imported(tmp_path: Path, platform: str, download: Path) -> list[str]:
    """The folder names `graphgrade import` writes for a download (what `grade` names OUT/* by)."""
    into = tmp_path / f"{platform}-subs"
    proc = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "import", platform, str(download), "--into", str(into)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return sorted(p.name for p in into.iterdir())


def test_canvas_export_after_import_needs_no_options_id_is_the_default(tmp_path, gradebook):
    from support.lms_downloads import canvas_download

    names = imported(tmp_path, "canvas", canvas_download(tmp_path))
    assert names == ["1001", "1002", "1003", "1004"]
    out = make_out(tmp_path, dict.fromkeys(names, 80.0))
    proc = export("canvas", str(out), "--roster", str(gradebook), "--assignment", ASSIGNMENT)
    assert proc.returncode == 0, proc.stderr
    got = rows(proc.stdout)
    assert [r[1] for r in got[2:]] == names  # in the roster's order, by Canvas user id
    assert "4 of 4 submissions matched; 0 unmatched, 1 students without a submission" in proc.stderr
    assert "no submission for 'Park, Min' (ID '1005', CS 240 - L02)" in proc.stderr


def test_moodle_export_after_import_writes_the_grading_worksheet_back(tmp_path):
    from support.lms_downloads import moodle_download

    names = imported(tmp_path, "moodle", moodle_download(tmp_path))
    assert names == ["1234567", "1234568", "1234570"]
    worksheet = tmp_path / "Grades-CS240-Lab-12345.csv"
    worksheet.write_text(MOODLE_WORKSHEET, encoding="utf-8")
    out = make_out(tmp_path, {"1234567": 100.0, "1234568": 57.5, "1234570": 0.0})
    target = tmp_path / "upload.csv"
    proc = export("moodle", str(out), "--roster", str(worksheet), "--output", str(target))
    assert proc.returncode == 0, proc.stderr
    got = rows(target.read_text(encoding="utf-8"))
    assert got[0] == rows(MOODLE_WORKSHEET)[0]  # Moodle's upload needs Identifier, Grade, Last modified (grade)
    # the grade in Grade, scaled to the row's Maximum Grade; every other cell as Moodle wrote it
    assert [(r[0], r[4]) for r in got[1:]] == [
        ("Participant 1234567", "20"),
        ("Participant 1234568", "11.5"),
        ("Participant 1234570", "0"),
    ]
    assert got[1][7] == "Monday, 1 March 2026, 11:10 PM"
    assert got[1][8] == "'-"  # Moodle's "-" (never graded), guarded as every text cell is; Moodle reads it alike
    assert "no submission for 'Participant 1234569'" in proc.stderr


def test_moodle_without_an_identifier_column_says_which_file_to_give(tmp_path):
    roster = tmp_path / "moodle-grades.csv"
    roster.write_text(
        '"First name","Email address","Assignment: Lab (Real)"\n"Jane","jdoe@uni.edu","-"\n', encoding="utf-8"
    )
    proc = export("moodle", str(make_out(tmp_path, {"1234567": 1.0})), "--roster", str(roster))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "no column 'Identifier'" in proc.stderr and "Download grading worksheet" in proc.stderr
    assert "--match-column" in proc.stderr


CANVAS_ASSIGNMENTS = f"one of 'Quiz 1 (48100)', {ASSIGNMENT!r}"


@pytest.mark.parametrize(
    "lms, column, instead",
    [
        ("canvas", "Final Score", CANVAS_ASSIGNMENTS),
        ("canvas", "Current Score", CANVAS_ASSIGNMENTS),
        ("canvas", "Unposted Final Score", CANVAS_ASSIGNMENTS),  # not even in this gradebook: still Canvas's total
        ("canvas", "Assignments Current Points", CANVAS_ASSIGNMENTS),
        ("moodle", "Maximum Grade", "'Grade'"),
        ("moodle", "Last modified (grade)", "'Grade'"),
        ("moodle", "Final grade", "'Grade'"),
    ],
)
def test_a_column_the_lms_computes_is_refused_naming_the_one_to_use(tmp_path, gradebook, lms, column, instead):
    if lms == "moodle":
        roster = tmp_path / "worksheet.csv"
        roster.write_text(MOODLE_WORKSHEET, encoding="utf-8")
        out = make_out(tmp_path, {"1234567": 1.0})
    else:
        roster, out = gradebook, make_out(tmp_path, {"1001": 1.0})
    for extra in ((), ("--new-column",)):
        proc = export(lms, str(out), "--roster", str(roster), "--assignment", column, *extra)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert f"--assignment {column!r} is computed by {lms.capitalize()} itself (read only)" in proc.stderr
        assert proc.stderr.strip().endswith(f"give the assignment's own column, {instead}")


def test_a_moodle_gradebook_course_total_is_refused(tmp_path):
    roster = tmp_path / "moodle.csv"
    roster.write_text(
        '"First name","Email address","Assignment: Lab (Real)","Course total (Real)"\n"Jane","jdoe@uni.edu","-","-"\n',
        encoding="utf-8",
    )
    out = make_out(tmp_path, {"jdoe_uni.edu": 1.0})
    proc = export(
        "moodle",
        str(out),
        "--roster",
        str(roster),
        "--assignment",
        "Course total (Real)",
        "--match-column",
        "Email address",
    )
    assert proc.returncode == 2 and proc.stderr.strip().endswith(
        "give the assignment's own column, 'Assignment: Lab (Real)'"
    )


def test_an_export_that_matches_nothing_exits_1_naming_every_submission(tmp_path, gradebook):
    """The issue's Moodle case: 0 of 5 matched and exit 0; now exit 1, how many and which."""
    out = make_out(tmp_path, {f"user{i}": 1.0 for i in range(12)})
    proc = export("canvas", str(out), "--roster", str(gradebook), "--assignment", ASSIGNMENT)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("graphgrade: 12 graded submission(s) not in the grade file: user0, user1, user10,")
    assert last.endswith("and 2 more (matched on 'ID'; see the lines above)")
    assert proc.stderr.count("not exported: no student has ID") == 12


def test_moodle_identifier_is_compared_by_its_number_in_any_language_and_points_can_be_chosen(tmp_path):
    worksheet = tmp_path / "Bewertungen.csv"
    worksheet.write_text(MOODLE_WORKSHEET.replace("Participant ", "Teilnehmer/in "), encoding="utf-8")
    out = make_out(tmp_path, {"1234567": 50.0})
    proc = export("moodle", str(out), "--roster", str(worksheet), "--points-possible", "10")
    assert proc.returncode == 0, proc.stderr
    assert [(r[0], r[4]) for r in rows(proc.stdout)[1:]] == [("Teilnehmer/in 1234567", "5")]


def test_canvas_without_an_id_column_is_one_line(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,SIS Login ID,Lab (1)\nJane,jdoe,\n", encoding="utf-8")
    proc = export("canvas", str(make_out(tmp_path, {"1001": 1.0})), "--roster", str(roster))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "no column 'ID'" in proc.stderr


def test_a_column_canvas_marks_read_only_is_refused_whatever_its_name(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Lab (7),Weighted Extra\n"
        "    Points Possible,,,,,10.00,(read only)\n"
        "Jane,1001,S1,jdoe,L01,,\n",
        encoding="utf-8",
    )
    proc = export(
        "canvas", str(make_out(tmp_path, {"1001": 1.0})), "--roster", str(roster), "--assignment", "Weighted Extra"
    )
    assert proc.returncode == 2 and proc.stderr.strip().endswith("give the assignment's own column, 'Lab (7)'")


def test_a_gradebook_with_one_assignment_needs_no_assignment_option(tmp_path, gradebook):
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Lab (7),Final Score\n"
        "    Points Possible,,,,,10.00,(read only)\n"
        "Jane,1001,S1,jdoe,L01,,\n",
        encoding="utf-8",
    )
    proc = export("canvas", str(make_out(tmp_path, {"1001": 50.0})), "--roster", str(roster))
    assert proc.returncode == 0, proc.stderr
    assert "no --assignment: writing roster.csv's one assignment column, 'Lab (7)'" in proc.stderr
    assert rows(proc.stdout)[2] == ["Jane", "1001", "S1", "jdoe", "L01", "5"]
    proc = export("canvas", str(make_out(tmp_path / "b", {"1001": 50.0})), "--roster", str(gradebook))
    assert proc.returncode == 2 and "--assignment 'graphgrade' is not a column" in proc.stderr  # two: which one?
