"""What ``graphgrade export`` knows about the LMSs' own columns: which one identifies a student
by default, how its values compare with a submission's folder name, and which columns the LMS
computes itself (never a target for a grade).

- Canvas's gradebook export (Grades > Export): ``ID`` is the Canvas user id, the id that
  Canvas's "Download Submissions" puts in every file name, so ``graphgrade import canvas``
  names each folder by it and export matches on it by default. Canvas computes the totals
  (``Current Score``, ``Final Score``, their ``Unposted`` forms, the ``Grade`` and ``Points``
  forms, and each assignment group's) and marks them ``(read only)`` in the Points Possible row.
- Moodle's grading worksheet (the assignment's View all submissions > Download grading
  worksheet): ``Identifier`` reads ``Participant 1234567`` (the word is translated), the
  participant id of Moodle's "Download all submissions" folder names, which ``graphgrade
  import moodle`` names each folder by; the grade goes in ``Grade``, and Moodle's upload needs
  ``Identifier``, ``Grade`` and ``Last modified (grade)``, so the worksheet is written back whole.
  Moodle computes ``Maximum Grade``, ``Final grade``, ``Status``, ``Grade can be changed`` and
  the ``Last modified`` columns; in a gradebook export, ``Course total`` and category totals.
"""

from __future__ import annotations

import re

CANVAS_MATCH = "ID"
MOODLE_MATCH = "Identifier"
WORKSHEET_GRADE = "Grade"
WORKSHEET_NEEDS = ("Identifier", "Grade", "Last modified (grade)")
WORKSHEET_MAX = "Maximum Grade"
CANVAS_COMPUTED = re.compile(r"^(?:.+ )?(?:Unposted )?(?:Current|Final) (?:Score|Grade|Points)$")
MOODLE_COMPUTED = (
    WORKSHEET_MAX,
    "Final grade",
    "Status",
    "Grade can be changed",
    "Last modified (submission)",
    "Last modified (grade)",
    "Marking workflow state",
)
MOODLE_TOTAL = re.compile(r"^(?:Course|Category) total\b|\btotal \((?:Real|Percentage|Letter)\)$", re.I)
PARTICIPANT = re.compile(r"^\D*?(\d+)\s*$")


def default_match(lms: str) -> str:
    return CANVAS_MATCH if lms == "canvas" else MOODLE_MATCH


def is_worksheet(header: tuple[str, ...]) -> bool:
    """A Moodle grading worksheet (rather than a gradebook export): its import needs these columns."""
    return all(c in header for c in WORKSHEET_NEEDS)


def roster_value(column: str, value: str) -> str:
    """The part of a roster value a folder name is compared with: Moodle's ``Participant 1234567``
    is ``1234567`` (what ``graphgrade import moodle`` names the folder); any other value as it is."""
    if column == MOODLE_MATCH:
        m = PARTICIPANT.match(value)
        if m:
            return m[1]
    return value


def computed_by_lms(lms: str, column: str, header: tuple[str, ...], points_possible: dict[str, str]) -> bool:
    """Whether the LMS computes ``column`` itself (a total, a status): an import cannot set it."""
    if lms == "canvas":
        return bool(CANVAS_COMPUTED.match(column)) or "read only" in points_possible.get(column, "").casefold()
    return column in MOODLE_COMPUTED or bool(MOODLE_TOTAL.search(column))


def missing_match_column(lms: str, column: str, path_name: str, header: tuple[str, ...]) -> str:
    """Why the roster lacks the match column, and what to give instead (one line)."""
    listed = ", ".join(header)
    if lms == "moodle" and column == MOODLE_MATCH:
        return (
            f"{path_name}: no column 'Identifier' (columns: {listed}): give the assignment's grading worksheet "
            "(View all submissions > Grading action > Download grading worksheet), whose Identifier is the "
            "participant id `graphgrade import moodle` names folders by; for a gradebook export, give "
            "--match-column with the column your folder names hold (e.g. 'Email address')"
        )
    if lms == "canvas" and column == CANVAS_MATCH:
        return (
            f"{path_name}: no column 'ID' (columns: {listed}): give Canvas's gradebook export "
            "(Grades > Export > Export Entire Gradebook)"
        )
    return f"{path_name}: no column {column!r} (columns: {listed})"
