"""A case's cause as data (issue 34, point 4): the judge records what failed first (the check's
kind, or the step's own cause) and the student's line it names; report.json keeps both; Fix
this first makes one cause of the failures that name one line; a spec's ``hints:`` give a hint
per cause, shown on a visible case only (a hidden case stays one bit)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.labs import REPLAY_LOAD, line_of, reference_with

from grader.judging.report_reading import read_report
from grader.spec.loader import SpecErrors, load_suite
from reports.view import case_text, case_views, page_causes, spec_views

REPO = Path(__file__).resolve().parents[1]
BUGGY = reference_with(REPLAY_LOAD, "        y = x")  # the replay runs the ops on the caller's array


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """The replay-on-x bug graded on the whole suite, with a hint per cause added to one spec."""
    root = tmp_path_factory.mktemp("causes")
    specs = root / "specs"
    specs.mkdir()
    for path in (REPO / "specs").glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        if path.name == "04_static_buffer.yaml":
            text = text.replace(
                "    cases:\n      - id: same-buffer-three-calls",
                "    hints:\n      witness: Which array do you hand the first op when you replay?\n"
                "      raised: Something in your replay raised.\n"
                "    cases:\n      - id: same-buffer-three-calls",
                1,
            )
        (specs / path.name).write_text(text, encoding="utf-8")
    sub = root / "alice"
    sub.mkdir()
    (sub / "cudagraph.py").write_text(BUGGY, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-P", "-m", "grader", "grade", str(sub), "--specs", str(specs), "--out", str(root / "out")]
        + ["--no-cache"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=root,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return root / "out" / "alice"


def test_report_json_names_each_failures_check_kind_and_the_students_line(graded):
    cases = json.loads((graded / "report.json").read_text(encoding="utf-8"))["cases"]
    witness = [c for c in cases if c["spec"] == "static-buffer-basics" and c["case"] == "first-op-sees-static-buffer"]
    (case,) = witness
    assert case["status"] == "failed" and case["cause"] == "witness"
    # the bug's own line (where the array op 0 was handed came from), not the op call it reaches
    assert case["origin"] == f"cudagraph.py:{line_of(BUGGY, '        y = x')}"
    assert all(c["cause"] == "" and c["origin"] == "" for c in cases if c["status"] == "passed")


def test_failures_naming_one_line_are_one_cause_in_fix_this_first(graded):
    report = read_report(graded / "report.json")
    specs = spec_views(report, staff=True)
    causes = page_causes(specs).causes
    origins = {c.view.origin for cause in causes for c in cause.cases if c.view.origin}
    by_origin = [cause for cause in causes if any(c.view.origin for c in cause.cases)]
    assert len(by_origin) == len(origins)  # one cause per line named
    (replay_line,) = [o for o in origins if o.endswith(f":{line_of(BUGGY, '            y = op(y)')}")]
    (cause,) = [c for c in by_origin if c.cases[0].view.origin == replay_line]
    kinds = {c.view.cause for c in cause.cases}
    assert len(cause.cases) > 1 and kinds  # several cases, one cause


def test_a_hint_for_the_cause_replaces_the_specs_hint_on_a_visible_case_only(graded):
    report = read_report(graded / "report.json")
    hinted = [c for c in report.cases if c.hint]
    assert hinted and {c.cause for c in hinted} == {"witness"}
    assert all(c.spec.startswith("static-buffer") for c in hinted)
    visible = [v for v in case_views(report) if v.hint]
    assert visible and all(not v.redacted for v in visible)
    assert "Hint: Which array do you hand the first op when you replay?" in case_text(visible[0], "the spec's hint")
    # a hidden case is one bit: no cause, no line, no hint
    for view in case_views(report):
        if view.redacted:
            assert (view.cause, view.origin, view.hint) == ("", "", "")
    page = (graded / "report.html").read_text(encoding="utf-8")
    assert "Which array do you hand the first op when you replay?" in page


def test_hints_name_a_check_kind_or_a_steps_own_cause(tmp_path):
    text = (REPO / "specs" / "01_launch_counter.yaml").read_text(encoding="utf-8")
    (tmp_path / "01.yaml").write_text(
        text.replace("    cases:\n", "    hints:\n      wrong_kind: nope\n    cases:\n", 1), encoding="utf-8"
    )
    with pytest.raises(SpecErrors) as errors:
        load_suite(tmp_path)
    (message,) = errors.value.errors
    text = str(message)
    assert "01.yaml" in text and "wrong_kind" in text and "\n" not in text


def test_a_report_of_format_2_reads_with_no_cause(graded, tmp_path):
    data = json.loads((graded / "report.json").read_text(encoding="utf-8"))
    data["format"] = 2
    for c in data["cases"]:
        for key in ("cause", "origin", "hint"):
            c.pop(key)
    (tmp_path / "report.json").write_text(json.dumps(data), encoding="utf-8")
    old = read_report(tmp_path / "report.json")
    assert all((c.cause, c.origin, c.hint) == ("", "", "") for c in old.cases)
