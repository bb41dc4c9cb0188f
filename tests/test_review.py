"""Unit tests of ``reports.review``: the staff-only list of submissions an integrity flag asks a
person to look at."""

from __future__ import annotations

from dataclasses import replace

from test_reports_samples import failing_report, passing_report

from grader.judging.results import Flag
from reports.review import SHOWN_FLAGS, needs_review


def _flag(rule: str, line: int = 1) -> Flag:
    return Flag(rule, "cudagraph.py", line, f"{rule} at line {line}")


def test_only_flagged_submissions_are_listed_by_name_ignoring_case():
    reports = [
        replace(passing_report("zed"), flags=(_flag("b"), _flag("a"), _flag("b", 2))),
        passing_report("clean"),
        replace(failing_report("Amy"), flags=(_flag("c"),)),
        replace(failing_report("bob"), flags=(_flag("a"),)),
    ]
    rows = needs_review(reports, ["zed/r.html", "clean/r.html", "amy/r.html", "bob/r.html"])
    assert [(r.name, r.href) for r in rows] == [("Amy", "amy/r.html"), ("bob", "bob/r.html"), ("zed", "zed/r.html")]
    assert rows[2].rules == ("a", "b") and rows[2].n_flags == 3


def test_at_most_shown_flags_are_listed_but_all_are_counted():
    flags = tuple(_flag("r", i) for i in range(SHOWN_FLAGS + 5))
    (row,) = needs_review([replace(passing_report(), flags=flags)], ["x"])
    assert row.flags == flags[:SHOWN_FLAGS] and row.n_flags == SHOWN_FLAGS + 5


def test_a_submission_name_is_one_clean_line_and_never_empty():
    odd = replace(passing_report(), submission="evil\nname\x1b[31m", flags=(_flag("r"),))
    blank = replace(passing_report(), submission="", flags=(_flag("r"),))
    names = {row.name for row in needs_review([odd, blank], ["a", "b"])}
    assert names == {"evil name", "(unnamed)"}
