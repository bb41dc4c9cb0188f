"""``graphgrade export canvas|moodle``: a grade file the course's LMS imports, from a graded batch.

Input: ``OUT`` (a ``graphgrade grade --out`` folder; every ``OUT/<name>/report.json``)
and the course's own roster, exported from the LMS (Canvas: Grades > Export; Moodle: the
assignment's grading worksheet, or Grades > Export > Plain text file). Each submission is
matched to one roster row by one column, by default the identifier ``graphgrade import``
names folders by (Canvas: ``ID``, the user id; Moodle: ``Identifier``, ``Participant N``
compared by its N; see :mod:`grader.commands.lms_columns`):

- the submission's key is its folder name under ``OUT`` (the submission's
  directory name, with characters other than ``A-Z a-z 0-9 . _ -`` turned into
  ``_``, as ``graphgrade grade`` names it), after ``--prefix`` is stripped
  (GitHub Classroom names repositories ``<assignment>-<username>``), then
  looked up in ``--map`` when given (a CSV, for instance GitHub Classroom's
  roster: ``--map classroom_roster.csv --map-from github_username --map-to
  identifier``);
- a roster value is compared the same way: the same character rule, case
  ignored (``Jane.Doe@uni.edu`` matches a folder ``jane.doe_uni.edu``).

Nothing is dropped silently: a submission that matches no student (or a
student another submission already took), and a student with no submission,
is one line on standard error and one row of ``<output>.unmatched.csv`` when
``--output`` is given; the exit status is 1 when a graded submission is not in the file (it
matched no one, or its report could not be read). A column the LMS computes (Canvas's
Final Score, Moodle's Maximum Grade) is refused as the target, naming the one to use. Text
cells go through :func:`reports.csv_export.safe_cell` (formula injection), as in grades.csv.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import io
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.commands import lms_columns
from grader.commands.cli_common import Subcommand
from grader.errors import UsageError

CANVAS_ID_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "Points Possible"
TEST_STUDENT_NAMES = ("student, test", "test student")  # Canvas's "Student View" user
# Canvas's other identity and account columns; Moodle's identity columns (every other column of
# a Moodle export is a grade item, "Assignment: Lab (Real)", or the course total).
CANVAS_OTHER_COLUMNS = ("Integration ID", "Root Account")
MOODLE_ID_COLUMNS = (
    "First name",
    "Last name",
    "Surname",
    "ID number",
    "Username",
    "Institution",
    "Department",
    "Email address",
    "Last downloaded from this course",
)
MAX_ROSTER_BYTES = 32 * 1024 * 1024


def match_key(text: str) -> str:
    """The form both sides are compared in: graphgrade's folder-name rule, case folded."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text.strip()).strip(".").casefold()


@dataclass(frozen=True)
class Roster:
    path: Path
    header: tuple[str, ...]
    rows: tuple[dict[str, str], ...]  # student rows only
    points_possible: dict[str, str]  # the "Points Possible" row, by column (Canvas), or {}
    delimiter: str


@dataclass(frozen=True)
class Graded:
    name: str  # the folder under OUT
    score: float
    max_score: float


@dataclass(frozen=True)
class Match:
    rows: tuple[tuple[dict[str, str], Graded], ...]  # roster row and its submission, roster order
    unmatched_submissions: tuple[tuple[Graded, str], ...]  # (submission, why)
    missing_students: tuple[dict[str, str], ...]  # roster rows with no submission


# ------------------------------------------------------------------ reading
def read_csv_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_ROSTER_BYTES:
        raise UsageError(f"{path}: larger than {MAX_ROSTER_BYTES} bytes; is this a roster?")
    try:
        return data.decode("utf-8-sig")  # Canvas and Excel write a byte-order mark
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")  # Excel on Windows, "CSV" not "CSV UTF-8"


def _delimiter(text: str) -> str:
    first = text.split("\n", 1)[0]
    try:
        return csv.Sniffer().sniff(first, delimiters=",;\t").delimiter
    except csv.Error:
        return ","


def read_roster(path: Path, need: Sequence[str]) -> Roster:
    """The roster's student rows; the Points Possible row (and Canvas's posting-policy rows) apart."""
    try:
        return _read_roster(path, need)
    except csv.Error as exc:
        raise UsageError(f"{path}: not a readable CSV ({exc})") from None


def _read_roster(path: Path, need: Sequence[str]) -> Roster:
    text = read_csv_text(path)
    delimiter = _delimiter(text)
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise UsageError(f"{path}: empty roster")
    header = tuple(cell.strip() for cell in rows[0])
    for column in need:
        if column not in header:
            raise UsageError(f"{path}: no column {column!r} (columns: {', '.join(header)})")
    students: list[dict[str, str]] = []
    points: dict[str, str] = {}
    for raw in rows[1:]:
        row = {h: (raw[i].strip() if i < len(raw) else "") for i, h in enumerate(header)}
        first = raw[0].strip() if raw else ""
        if first == POINTS_POSSIBLE:
            points = row
            continue
        if not first and not row.get("ID", "") and not row.get("Student", ""):
            continue  # Canvas's "Manual Posting" line and other non-student rows
        students.append(row)
    return Roster(path, header, tuple(students), points, delimiter)


def read_graded(out: Path) -> tuple[list[Graded], list[str]]:
    """Every OUT/<name>/report.json, and one line per report that could not be read."""
    from grader.judging.report_reading import ReportError, read_report

    if not out.is_dir():
        raise UsageError(f"{out}: no such directory (give a `graphgrade grade --out` folder)")
    graded, problems = [], []
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        path = folder / "report.json"
        if not path.is_file():
            continue
        try:
            report = read_report(path)
        except ReportError as exc:
            problems.append(str(exc))
            continue
        graded.append(Graded(folder.name, report.score, report.max_score))
    if not graded and not problems:
        raise UsageError(f"{out}: no */report.json here (give a `graphgrade grade --out` folder)")
    return graded, problems


def read_map(path: Path, source: str | None, target: str | None) -> dict[str, str]:
    """--map: submission key -> roster value, from two columns of a CSV with a header."""
    try:
        return _read_map(path, source, target)
    except csv.Error as exc:
        raise UsageError(f"{path}: not a readable CSV ({exc})") from None


def _read_map(path: Path, source: str | None, target: str | None) -> dict[str, str]:
    text = read_csv_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=_delimiter(text))
    fields = [f.strip() for f in (reader.fieldnames or [])]
    if len(fields) < 2:
        raise UsageError(f"{path}: a map needs a header and two columns (submission, roster value)")
    source, target = source or fields[0], target or fields[1]
    for column in (source, target):
        if column not in fields:
            raise UsageError(f"{path}: no column {column!r} (columns: {', '.join(fields)})")
    mapping = {}
    for row in reader:
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items() if k is not None}
        if row.get(source) and row.get(target):
            mapping[match_key(row[source])] = row[target]
    return mapping


# ------------------------------------------------------------------ matching
def match(
    graded: Sequence[Graded], roster: Roster, column: str, prefix: str = "", mapping: dict[str, str] | None = None
) -> Match:
    """Pair submissions with roster rows by ``column``; everything left over is reported."""
    by_key: dict[str, list[int]] = {}
    for i, row in enumerate(roster.rows):
        if row.get(column):
            by_key.setdefault(match_key(lms_columns.roster_value(column, row[column])), []).append(i)
    taken: dict[int, Graded] = {}
    unmatched: list[tuple[Graded, str]] = []
    for g in graded:
        key = g.name[len(prefix) :] if prefix and g.name.casefold().startswith(prefix.casefold()) else g.name
        if mapping is not None:
            if match_key(key) not in mapping:
                unmatched.append((g, f"{key!r} is not in the --map file"))
                continue
            key = mapping[match_key(key)]
        rows = by_key.get(match_key(key), [])
        if not rows:
            unmatched.append((g, f"no student has {column} {key!r}"))
        elif len(rows) > 1:
            unmatched.append((g, f"{len(rows)} students have {column} {key!r}"))
        elif rows[0] in taken:
            unmatched.append((g, f"{column} {key!r} is already matched by submission {taken[rows[0]].name!r}"))
        else:
            taken[rows[0]] = g
    pairs = tuple((roster.rows[i], taken[i]) for i in sorted(taken))
    missing = tuple(
        row
        for i, row in enumerate(roster.rows)
        if i not in taken and row.get("Student", "").strip().casefold() not in TEST_STUDENT_NAMES
    )
    return Match(pairs, tuple(unmatched), missing)


def _fmt(x: float) -> str:
    """Up to four decimals, no trailing zeros: an LMS keeps what it is given (6.125, not 6.12)."""
    text = f"{round(float(x), 4):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def grade_value(g: Graded, points_possible: float | None) -> str:
    """Points as graded, or scaled to the LMS column's points possible."""
    if points_possible is None:
        return _fmt(g.score)
    return _fmt(g.score / g.max_score * points_possible if g.max_score else 0.0)


# ------------------------------------------------------------------ writing
def canvas_rows(m: Match, roster: Roster, assignment: str, points_possible: float | None) -> list[list[str]]:
    """Canvas's import: Student, ID, SIS User ID, SIS Login ID, Section, the assignment; the
    Points Possible row second (as Canvas exports it), then one row per matched student."""
    from reports.csv_export import safe_cell

    possible = points_possible if points_possible is not None else max((g.max_score for _, g in m.rows), default=0.0)
    rows = [[safe_cell(c) for c in (*CANVAS_ID_COLUMNS, assignment)]]
    rows.append([f"    {POINTS_POSSIBLE}", "", "", "", "", _fmt(possible)])
    for row, g in m.rows:
        rows.append([safe_cell(row.get(c, "")) for c in CANVAS_ID_COLUMNS] + [grade_value(g, points_possible)])
    return rows


def moodle_rows(
    m: Match, column: str, assignment: str, points_possible: float | None, roster: Roster | None = None
) -> list[list[str]]:
    """Moodle's grade import: for a grading worksheet, the worksheet itself (Moodle's upload needs
    its Identifier, Grade and Last modified (grade)), one row per matched student with its grade
    set, scaled to the row's Maximum Grade unless ``points_possible`` is given; otherwise the
    identifier column and one grade column (mapped in Moodle's import form: "Map from" the
    identifier, "Map to" email / username / ID number)."""
    from reports.csv_export import safe_cell

    if roster is not None and lms_columns.is_worksheet(roster.header):
        out = [[safe_cell(c) for c in roster.header]]
        for row, g in m.rows:
            scale = points_possible if points_possible is not None else _positive(row.get(lms_columns.WORKSHEET_MAX))
            out.append([grade_value(g, scale) if c == assignment else safe_cell(row.get(c, "")) for c in roster.header])
        return out
    rows = [[safe_cell(column), safe_cell(assignment)]]
    rows += [[safe_cell(row[column]), grade_value(g, points_possible)] for row, g in m.rows]
    return rows


def unmatched_rows(m: Match, column: str, unreadable: Sequence[str]) -> list[list[str]]:
    from reports.csv_export import safe_cell

    rows = [["problem", "submission", "student", column, "detail"]]
    rows += [["unreadable report", "", "", "", safe_cell(p)] for p in unreadable]
    rows += [
        ["submission matches no student", safe_cell(g.name), "", "", safe_cell(why)]
        for g, why in m.unmatched_submissions
    ]
    rows += [
        [
            "student has no submission",
            "",
            safe_cell(r.get("Student", "")),
            safe_cell(r.get(column, "")),
            safe_cell(r.get("Section", "")),
        ]
        for r in m.missing_students
    ]
    return rows


def _positive(text: str | None) -> float | None:
    try:
        value = float((text or "").replace(",", "."))
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def to_csv(rows: list[list[str]], delimiter: str = ",") -> str:
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    return buf.getvalue()


def _points_possible(args: argparse.Namespace, roster: Roster, column: str | None) -> float | None:
    if args.points_possible is not None:
        if not (math.isfinite(args.points_possible) and args.points_possible > 0):
            raise UsageError(f"--points-possible must be a positive number, not {args.points_possible:g}")
        return args.points_possible
    if column and roster.points_possible.get(column):
        try:
            points = float(roster.points_possible[column].replace(",", "."))
        except ValueError:
            return None
        if not (math.isfinite(points) and points > 0):  # scaling to 0, inf or nan would ruin every grade
            raise UsageError(
                f"the roster's Points Possible for {column!r} is {roster.points_possible[column]!r}, not a positive number: give --points-possible"
            )
        return points
    return None


def assignment_columns(roster: Roster, lms: str, match_column: str) -> list[str]:
    """The gradebook's assignment (grade item) columns: Canvas's with points possible that are
    not read-only totals; Moodle's that are not identity columns."""
    if lms == "moodle" and lms_columns.is_worksheet(roster.header):
        return [lms_columns.WORKSHEET_GRADE]
    skip = {*CANVAS_ID_COLUMNS, *CANVAS_OTHER_COLUMNS} if lms == "canvas" else set(MOODLE_ID_COLUMNS)
    return [
        c
        for c in roster.header
        if c
        and c not in skip
        and c != match_column
        and not lms_columns.computed_by_lms(lms, c, roster.header, roster.points_possible)
    ]


def default_assignment(roster: Roster, lms: str, column: str, worksheet: bool) -> str:
    """No --assignment: a Moodle worksheet's Grade; a gradebook's one assignment column when it
    has exactly one (said in a line); else "graphgrade", a new column only with --new-column."""
    if worksheet:
        return lms_columns.WORKSHEET_GRADE
    columns = assignment_columns(roster, lms, column)
    if len(columns) == 1:
        print(
            f"graphgrade: no --assignment: writing {roster.path.name}'s one assignment column, {columns[0]!r}",
            file=sys.stderr,
        )
        return columns[0]
    return "graphgrade"


def check_assignment(
    assignment: str, columns: list[str], roster: Roster, new_column: bool, lms: str = "canvas"
) -> str | None:
    """None when ``assignment`` is one of the gradebook's assignment ``columns``; else the warning
    that names them and the closest one (a usage error without ``--new-column``). A column of the
    gradebook that is not an assignment (an identity column, a read-only total) is always refused:
    grades written there would overwrite who the students are."""
    if assignment in columns:
        return None
    close = difflib.get_close_matches(assignment, columns, n=1, cutoff=0.0)
    listed = ", ".join(repr(c) for c in columns) if columns else "none"
    closest = f"; the closest is {close[0]!r}" if close else ""
    if lms_columns.computed_by_lms(lms, assignment, roster.header, roster.points_possible):
        instead = f"{columns[0]!r}" if len(columns) == 1 else f"one of {listed}" if columns else "(the roster has none)"
        raise UsageError(
            f"--assignment {assignment!r} is computed by {lms.capitalize()} itself (read only): an import cannot "
            f"set it; give the assignment's own column, {instead}"
        )
    if assignment in roster.header:
        raise UsageError(
            f"--assignment {assignment!r} is a column of {roster.path.name} that is not an assignment "
            f"(an identity column or a read-only total): grades are never written there (its assignment "
            f"columns: {listed}{closest})"
        )
    text = (
        f"--assignment {assignment!r} is not a column of {roster.path.name} (its assignment columns: {listed}{closest})"
    )
    if not new_column:
        raise UsageError(f"{text}: give one of those, or --new-column to add {assignment!r} as a new column")
    return f"warning: {text}; writing it as a new column (--new-column)"


def run(args: argparse.Namespace) -> int:
    lms = args.lms
    column = args.match_column or lms_columns.default_match(lms)
    roster = read_roster(args.roster, ["Student", "ID"] if lms == "canvas" else [])
    if column not in roster.header:
        raise UsageError(lms_columns.missing_match_column(lms, column, args.roster.name, roster.header))
    graded, unreadable = read_graded(args.out_dir)
    mapping = read_map(args.map, args.map_from, args.map_to) if args.map else None
    m = match(graded, roster, column, args.prefix, mapping)
    worksheet = lms == "moodle" and lms_columns.is_worksheet(roster.header)
    assignment = args.assignment or default_assignment(roster, lms, column, worksheet)
    possible = (
        None if worksheet else _points_possible(args, roster, assignment if assignment in roster.header else None)
    )
    if worksheet and args.points_possible is not None:
        possible = _points_possible(args, roster, None)
    warning = check_assignment(assignment, assignment_columns(roster, lms, column), roster, args.new_column, lms)
    if warning:
        print(f"graphgrade: {warning}", file=sys.stderr)
    if lms == "canvas":
        rows = canvas_rows(m, roster, assignment, possible)
        if possible is not None and args.points_possible is None:
            print(
                f"graphgrade: scores scaled to the gradebook's {_fmt(possible)} points possible for {assignment!r}",
                file=sys.stderr,
            )
    else:
        rows = moodle_rows(m, column, assignment, possible, roster)
    text = to_csv(rows, roster.delimiter)
    for line in unreadable:
        print(f"graphgrade: {line} (not exported)", file=sys.stderr)
    for g, why in m.unmatched_submissions:
        print(f"graphgrade: submission {g.name!r} not exported: {why}", file=sys.stderr)
    for row in m.missing_students:
        section = f", {row['Section']}" if row.get("Section") else ""
        print(
            f"graphgrade: no submission for {row.get('Student') or row.get(column)!r} ({column} {row.get(column, '')!r}{section})",
            file=sys.stderr,
        )
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(text, encoding="utf-8", newline="")
            side = unmatched_path(args.output)
            side.write_text(to_csv(unmatched_rows(m, column, unreadable)), encoding="utf-8", newline="")
        except OSError as exc:
            raise UsageError(f"--output {args.output}: cannot write ({exc.strerror or exc})") from None
        print(f"wrote {args.output} ({len(m.rows)} students) and {side}", file=sys.stderr)
    n_left = len(m.unmatched_submissions) + len(m.missing_students) + len(unreadable)
    print(
        f"graphgrade: {len(m.rows)} of {len(graded)} submissions matched; {len(m.unmatched_submissions)} unmatched, "
        f"{len(m.missing_students)} students without a submission" + ("" if n_left else " (all matched)"),
        file=sys.stderr,
    )
    left_out = [g.name for g, _ in m.unmatched_submissions] + [p.split(":", 1)[0] for p in unreadable]
    if left_out:
        shown = ", ".join(left_out[:10]) + (f" and {len(left_out) - 10} more" if len(left_out) > 10 else "")
        print(
            f"graphgrade: {len(left_out)} graded submission(s) not in the grade file: {shown} "
            f"(matched on {column!r}; see the lines above)",
            file=sys.stderr,
        )
        return 1
    return 0


def unmatched_path(output: Path) -> Path:
    return output.with_name(output.stem + ".unmatched.csv")


def add_arguments(e: argparse.ArgumentParser) -> None:
    lms = e.add_subparsers(
        dest="lms", metavar="LMS", required=True, help="the learning management system to write for: canvas or moodle"
    )
    for name, default_column, what in (
        (
            "canvas",
            "ID, the Canvas user id `graphgrade import canvas` names folders by",
            "Canvas's gradebook import (Student, ID, SIS User ID, SIS Login ID, Section, the assignment; Points Possible row)",
        ),
        (
            "moodle",
            "Identifier, the participant id `graphgrade import moodle` names folders by",
            "Moodle's grade import (the grading worksheet with its Grade set, or an identifier column and a grade column)",
        ),
    ):
        p = lms.add_parser(
            name,
            help=f"write {what}",
            description=f"Write {what}. Unmatched submissions and students without a submission go to standard error (and OUTPUT.unmatched.csv); exit status 1 when a graded submission is left out.",
        )
        p.add_argument(
            "out_dir", type=Path, metavar="OUT", help="a `graphgrade grade --out` folder (reads OUT/*/report.json)"
        )
        p.add_argument(
            "--roster",
            type=Path,
            required=True,
            metavar="CSV",
            help=f"the roster exported from {name.capitalize()} (comma, semicolon or tab separated; a byte-order mark is fine)",
        )
        p.add_argument(
            "--assignment",
            default=None,
            metavar="NAME",
            help='the grade column: Canvas wants "Name (ID)" of an existing assignment, or a new name (default: a Moodle '
            "worksheet's Grade; the gradebook's one assignment column when it has one; else graphgrade)",
        )
        p.add_argument(
            "--new-column",
            action="store_true",
            help="--assignment is deliberately a new column (without it, a name the roster lacks is refused, "
            "with the roster's assignment columns and the closest one)",
        )
        p.add_argument(
            "--match-column",
            default=None,
            metavar="COLUMN",
            help=f"roster column that holds the submission's name (default: {default_column})",
        )
        p.add_argument(
            "--prefix", default="", help="strip this from submission names first (GitHub Classroom: 'ASSIGNMENT-')"
        )
        p.add_argument(
            "--map",
            type=Path,
            default=None,
            metavar="CSV",
            help="a CSV mapping submission names to roster values (e.g. GitHub Classroom's roster)",
        )
        p.add_argument(
            "--map-from",
            default=None,
            metavar="COLUMN",
            help="--map column holding submission names (default: its first column)",
        )
        p.add_argument(
            "--map-to",
            default=None,
            metavar="COLUMN",
            help="--map column holding roster values (default: its second column)",
        )
        p.add_argument(
            "--points-possible",
            type=float,
            default=None,
            metavar="POINTS",
            help="scale scores to this many points (Canvas default: the gradebook's Points Possible for --assignment, else points as graded)",
        )
        p.add_argument(
            "--output",
            type=Path,
            default=None,
            metavar="FILE",
            help="write here (and FILE's stem + .unmatched.csv beside it) instead of standard output",
        )


COMMAND = Subcommand(
    "export",
    help="write a grade file Canvas or Moodle imports, from a graded batch and the course roster",
    description="Write an LMS grade import from OUT/*/report.json, matched against a roster exported from the LMS.",
    add_arguments=add_arguments,
    run=run,
)
