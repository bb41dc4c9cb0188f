"""Issue 33 point 5: the notebook answers reach the student's report, staff.html and answers.csv,
inert (h80: markup, a formula, terminal escapes, a NUL, a bidi override and a forged CSV row)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "hostile"))
from materialize import materialize  # noqa: E402

NAME = "h80_answers_markup"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("answers")
    made = materialize(root / "subs", [NAME])
    out = root / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "grade", str(made["honest"]), str(made[NAME]), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def test_the_free_text_is_shown_escaped_on_the_students_page_and_staff_html(graded):
    for page in ("report.html", "staff.html"):
        html = (graded / NAME / page).read_text(encoding="utf-8")
        assert "&lt;/dd&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;" in html, page
        assert "<script" not in html and "<img" not in html, page
        assert not any(ch in html for ch in "\x1b\x00\u202e\r"), page
        assert "two-graphs:" in html and "Notebook answers" in html


def test_answers_csv_holds_one_row_per_slot_with_the_formula_disarmed(graded):
    rows = list(csv.reader(io.StringIO((graded / "answers.csv").read_text(encoding="utf-8"))))
    assert rows[0] == ["submission", "slot", "cited lines", "verdict", "free text"]
    mine = [r for r in rows[1:] if r[0] == NAME]
    assert [r[1] for r in mine] == ["constraint-1", "constraint-2", "win", "two-graphs"]
    assert not any(r[0] == "mallory" for r in rows), "a carriage return forged a row"
    by_slot = {r[1]: r for r in mine}
    assert by_slot["win"][2].startswith("'=HYPERLINK")
    assert by_slot["two-graphs"][3] == "not scored" and "<script>alert(1)</script>" in by_slot["two-graphs"][4]
    assert not any(ch in cell for r in rows for cell in r for ch in "\x1b\x00\u202e\r\n")
    honest = {r[1]: r[3] for r in rows[1:] if r[0] == "honest"}
    assert honest == {"constraint-1": "passed", "constraint-2": "passed", "win": "passed", "two-graphs": "not scored"}


def test_hostile_answers_cost_only_their_slots(graded):
    report = json.loads((graded / NAME / "report.json").read_text())
    honest = json.loads((graded / "honest" / "report.json").read_text())
    assert honest["score"] == honest["max_score"]
    failed = {c["case"] for c in report["cases"] if c["status"] != "passed"}
    assert failed == {"constraint-1", "constraint-2", "win"}
    messages = {c["case"]: c["message"] for c in report["cases"] if c["spec"] == "notebook-answers"}
    assert "has no line number yet" in messages["constraint-1"]
    assert "line 1 is part of a docstring" in messages["constraint-2"]
    assert "is not a citation" in messages["win"]
