"""Unit tests of ``reports.csv_export``: class grades as CSV, one row per submission and one
column per spec, read back exactly by a CSV reader, and no cell a spreadsheet would evaluate."""

from __future__ import annotations

import csv
import io
from dataclasses import replace

import pytest
from test_reports_samples import SECRETS, failing_report, hidden_report, passing_report

from reports import write_grades_csv
from reports.csv_export import grades_csv, grades_rows, safe_cell


@pytest.mark.parametrize("name", ['=HYPERLINK("http://x")', "+1+2", "-3", "@SUM(A1)", "\tx"])
def test_csv_guards_formula_injection(name, tmp_path):
    report = replace(passing_report(), submission=name)
    path = tmp_path / "grades.csv"
    write_grades_csv([report], path)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[1][0] == "'" + name
    assert safe_cell("alice") == "alice"


def test_csv_columns_are_stable_union():
    a = passing_report("a")
    b = failing_report("b")
    only_b = replace(
        b,
        specs=b.specs + (replace(b.specs[0], id="extra-spec", score=1.0, max_score=1.0),),
    )
    short = replace(a, specs=a.specs[2:4], submission="short")
    rows = list(csv.reader(io.StringIO(grades_csv([a, only_b, short]))))
    header = rows[0]
    assert header[:2] == ["submission", "path"] and header[-2:] == ["total", "max"]
    assert header[2:-2] == [s.id for s in a.specs] + ["extra-spec"]
    assert rows[1][header.index("extra-spec")] == ""
    assert rows[2][header.index("extra-spec")] == "1"
    assert rows[3][header.index(a.specs[0].id)] == ""
    assert [r[0] for r in rows[1:]] == ["a", "b", "short"]
    assert grades_csv([a, only_b, short]) == grades_csv([a, only_b, short])


@pytest.mark.parametrize("name", ['smith, "jo"', "two\nlines", "semi;colon", "caf\u00e9 \u4e2d\u6587"])
def test_awkward_names_read_back_exactly(name):
    """Commas, quotes and non-ASCII survive a CSV reader; a newline becomes a space (one row per line)."""
    rows = list(csv.reader(io.StringIO(grades_csv([replace(passing_report(), submission=name)]), newline="")))
    assert len(rows) == 2
    assert rows[1][0] == name.replace("\n", " ")


def test_rows_end_in_crlf():
    """RFC 4180 line endings, which every spreadsheet reads."""
    text = grades_csv([passing_report("a"), failing_report("b")])
    assert text.count("\r\n") == 3 and "\n" not in text.replace("\r\n", "")


def test_a_hidden_case_shows_only_in_its_specs_points():
    """The CSV holds points per spec, never a case: nothing of a hidden case's inputs, name or output."""
    report = hidden_report()
    text = grades_csv([report])
    for secret in SECRETS:
        assert secret not in text, secret
    header, row = grades_rows([report])
    padding = header.index("padding-capture-sizes")
    spec = next(s for s in report.specs if s.id == "padding-capture-sizes")
    assert spec.score < spec.max_score and row[padding] == f"{spec.score:g}"


def test_the_path_column_tells_two_folders_of_one_name_apart():
    a, b = passing_report("lab"), failing_report("lab")
    rows = grades_rows([a, b], ["section1/lab", "=section2/lab"])
    assert [r[:2] for r in rows[1:]] == [["lab", "section1/lab"], ["lab", "'=section2/lab"]]


def test_control_characters_in_a_cell_are_shown_not_kept():
    """A NUL or an escape sequence in a submission's name never reaches the file."""
    cell = safe_cell("bad\x00name\x1b[31m")
    assert cell == "bad\\x00name"


@pytest.mark.parametrize(
    "hidden", ["\ufeff", "\u200b", "\u2060", "\u200e", "\u061c", "\u180e", "\u00a0", " ", "\u200b\ufeff "]
)
@pytest.mark.parametrize("formula", ["=1+1", "@SUM(A1)", "+2", "-3"])
def test_csv_guard_looks_past_invisible_leading_characters(hidden, formula, tmp_path):
    """A cell that starts with a BOM, a zero-width or another format character (or a space)
    before '=' is still a formula to a spreadsheet that skips them: it is guarded."""
    report = replace(passing_report(), submission=hidden + formula)
    path = tmp_path / "grades.csv"
    write_grades_csv([report], path)
    with open(path, newline="", encoding="utf-8") as fh:
        cell = list(csv.reader(fh))[1][0]
    assert cell.startswith("'"), repr(cell)
    assert safe_cell(hidden + "alice") == safe_cell(hidden + "alice").lstrip("'")  # text stays text
