"""Verdicts as data (issue 32, points 3 and 4): every check line is a record, renderers read its
fields and never parse text, report.json (format 4) matches its published schema, a spec may
score a case check by check, and a hint attaches to a check record's cause key."""

from __future__ import annotations

import ast
import csv
import json
import os
import subprocess
import sys
from dataclasses import fields, replace
from pathlib import Path

import jsonschema
import pytest

from grader.judging.report_reading import read_report, report_from_json
from grader.judging.report_schema import SCHEMA_ENV, SchemaMismatch, check_report_text
from grader.judging.report_writing import report_json_text
from grader.judging.results import (
    REPORT_FORMAT,
    Answer,
    CaseResult,
    CauseAt,
    CheckLine,
    Flag,
    LaunchPoint,
    Report,
    SpecSummary,
    StepLine,
)
from grader.judging.scoring import check_share
from grader.suite.loader import SpecError, load_spec_text
from reports.view import case_text, full_view, observed_text

REPO = Path(__file__).resolve().parents[1]
SCHEMA_FILE = REPO / "docs" / "report.schema.json"
GRAPHGRADE = Path(sys.executable).with_name("graphgrade")

# reports/ modules that may use regular expressions, each for a reason that is not verdict text.
# A module not listed here that imports `re` (or `regex`) fails test_no_renderer_parses_verdict_text.
REGEX_ALLOWED = {
    # clean_text/slug: removes terminal escapes and unprintable characters from any text, and
    # makes anchors; it reads nothing back out of what it cleans.
    "reports/view/text.py",
    # the page's own CSS and SVG sprite (comments, class names, symbols): the grader's own markup.
    "reports/style.py",
    # spotting which spec notations (e.g. "float32[4, 8] seed 1") a page uses, to add their key;
    # it explains the notation and takes no value out of a verdict.
    "reports/view/notation.py",
}


def _uses_regex(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in ("re", "regex") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("re", "regex"):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            return True
    return False


def test_no_renderer_parses_verdict_text():
    found = {str(p.relative_to(REPO)) for p in (REPO / "reports").rglob("*.py") if _uses_regex(p)}
    assert found - REGEX_ALLOWED == set(), "a renderer reads verdict text with a regular expression: use the record"
    assert REGEX_ALLOWED <= found, "a module allowed a regex no longer uses one: take it off REGEX_ALLOWED"


def test_causes_are_keyed_by_records_never_by_verdict_text():
    """The judge's cause grouping (first causes, Fix this first, the class summary's rows) reads
    the verdict's records: no regular expression over a message anywhere on that path."""
    for module in ("grader/judging/first_cause.py", "reports/view/causes.py", "reports/html.py"):
        assert not _uses_regex(REPO / module), module


def test_the_regex_finder_finds_a_regex(tmp_path):
    for text in ("import re\n", "from re import sub\n", "import regex as r\n", "x = __import__('re')\n"):
        (tmp_path / "m.py").write_text(text, encoding="utf-8")
        assert _uses_regex(tmp_path / "m.py"), text
    (tmp_path / "m.py").write_text("import reports\nfrom reprlib import repr\n", encoding="utf-8")
    assert not _uses_regex(tmp_path / "m.py")


# ------------------------------------------------------------------ records in report.json
LOCATED = CheckLine(
    step=2,
    what="output equals the op chain",
    expected="float32[4, 8] [[1.0, …]]",
    observed="raised AttributeError: no _load",
    passed=False,
    id="output#1",
    check=1,
    cause="output",
    file="cudagraph.py",
    line=104,
    function="_replay",
)


def _report(**case_changes) -> Report:
    case = CaseResult(**{**_CASE, **case_changes})
    spec = SpecSummary("s", "S", "launch-counter", 3.0, "visible", "why", "hint", 1.0, 3.0, scoring="per-check")
    return Report(
        submission="sub",
        score=1.0,
        max_score=3.0,
        cases=(case,),
        specs=(spec,),
        flags=(Flag("threads", "cudagraph.py", 3, "imports threading"),),
        answers=(Answer("q1", "text", "not scored"),),
    )


_CASE = dict(
    spec="s",
    case="c",
    tag="launch-counter",
    status="failed",
    score=1.0,
    max_score=3.0,
    message="Step 3 (call runner(x)): raised AttributeError.",
    steps=(StepLine(2, "call runner(x)", "raised AttributeError: no _load at cudagraph.py:104"),),
    checks=(replace(LOCATED, passed=True, file="", line=0, function="", id="output#0", check=0), LOCATED),
    launches=(LaunchPoint(2, "call runner(x)", 1, None),),
    cause="output",
    origin="cudagraph.py:104",
    scoring="per-check",
    checks_passed=1,
    checks_total=3,
)


def test_every_field_of_a_check_record_goes_to_report_json_and_back():
    report = _report()
    assert REPORT_FORMAT == 4 and report.format == 4
    back = report_from_json(json.loads(report_json_text(report)))
    assert back == report
    line = back.cases[0].checks[1]
    assert (line.id, line.check, line.cause, line.file, line.line, line.function) == (
        "output#1",
        1,
        "output",
        "cudagraph.py",
        104,
        "_replay",
    )
    assert line.status == "failed" and line.where == "cudagraph.py:104"
    assert (back.cases[0].scoring, back.cases[0].checks_passed, back.cases[0].checks_total) == ("per-check", 1, 3)
    assert back.specs[0].scoring == "per-check"


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["checks"][1].update(line=-1), "checks[1].line: expected 0 or more"),
        (lambda c: c["checks"][1].update(line="104"), "checks[1].line: expected int"),
        (lambda c: c["checks"][1].update(function=3), "checks[1].function: expected str"),
        (lambda c: c.update(scoring="per-case"), "cases[0].scoring: 'per-case' is not one of whole-case, per-check"),
        (lambda c: c.update(checks_total=-2), "cases[0].checks_total: expected 0 or more"),
    ],
)
def test_a_malformed_record_field_is_refused_by_name(edit, message):
    data = json.loads(report_json_text(_report()))
    edit(data["cases"][0])
    with pytest.raises(Exception) as info:
        report_from_json(data)
    assert message in str(info.value)


def test_a_format_3_report_still_reads():
    """A format-3 file: the location inside the observation, no record fields."""
    data = json.loads(report_json_text(_report()))
    data["format"] = 3
    for case in data["cases"]:
        for key in ("scoring", "checks_passed", "checks_total"):
            case.pop(key)
        for check in case["checks"]:
            for key in ("id", "check", "cause", "file", "line", "function"):
                check.pop(key)
    for spec in data["specs"]:
        spec.pop("scoring")
    back = report_from_json(data)
    assert back.format == 3 and back.cases[0].scoring == "whole-case" and back.cases[0].checks[1].file == ""


def test_pages_build_the_location_from_the_record_fields():
    assert "(at " not in LOCATED.observed
    assert observed_text(LOCATED) == "raised AttributeError: no _load (at cudagraph.py:104)"
    assert observed_text(replace(LOCATED, file="", line=0)) == "raised AttributeError: no _load"
    text = case_text(full_view(_report().cases[0]))
    assert "observed: raised AttributeError: no _load (at cudagraph.py:104)" in text
    assert "Scored check by check: partial credit: 1 of 3 checks." in text


def test_a_step_health_line_is_said_once_by_the_record_fields():
    """The step's own line already says it raised (and where): its health line is not shown again
    as expected-against-observed; a check with another observation still is."""
    health = replace(LOCATED, expected="the step runs", id="step3.runs", check=None, cause="raised")
    view = full_view(_report(checks=()).cases[0])
    view = replace(view, checks=(health, LOCATED))
    assert view.shown_failed_checks == (LOCATED,)
    moved = replace(health, line=105)  # the step's line names another place: not the same observation
    assert replace(view, checks=(moved,)).shown_failed_checks == (moved,)


# ------------------------------------------------------------------ the published schema
def test_the_schema_is_draft_2020_12_and_the_suite_checks_every_report_against_it():
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["format"] == {
        "const": REPORT_FORMAT,
        **{"description": schema["properties"]["format"]["description"]},
    }
    assert os.environ.get(SCHEMA_ENV) == str(SCHEMA_FILE), "tests/conftest.py turns the check on for every report"
    # every field the writer writes is in the schema, and no other
    for cls, where in (
        (Report, schema),
        (CaseResult, schema["$defs"]["case"]),
        (CheckLine, schema["$defs"]["check"]),
        (StepLine, schema["$defs"]["step"]),
        (LaunchPoint, schema["$defs"]["launch"]),
        (SpecSummary, schema["$defs"]["spec"]),
        (Flag, schema["$defs"]["flag"]),
        (Answer, schema["$defs"]["answer"]),
        (CauseAt, schema["$defs"]["cause_pointer"]),
    ):
        assert {f.name for f in fields(cls)} == set(where["properties"]), cls.__name__
        assert where["additionalProperties"] is False


def test_the_schema_check_refuses_what_the_schema_does_not_allow(tmp_path):
    good = report_json_text(_report())
    check_report_text(good)
    for edit in (
        lambda d: d["cases"][0]["checks"][0].update(extra=1),
        lambda d: d["cases"][0]["checks"][0].pop("cause"),
        lambda d: d["cases"][0].update(scoring="per-case"),
        lambda d: d.update(format=3),
    ):
        data = json.loads(good)
        edit(data)
        with pytest.raises(SchemaMismatch, match="does not match"):
            check_report_text(json.dumps(data))


def test_first_cause_is_optional_and_shaped():
    data = json.loads(report_json_text(_report()))
    pointer = {"case": "s/c", "cause": "output", "text": "fix it", "file": "cudagraph.py", "line": 4, "function": "f"}
    check_report_text(json.dumps({**data, "first_cause": {"student": pointer, "staff": pointer}}))
    check_report_text(json.dumps({**data, "first_cause": {}}))
    with pytest.raises(SchemaMismatch):
        check_report_text(json.dumps({**data, "first_cause": {"student": {**pointer, "line": "4"}}}))


# ------------------------------------------------------------------ per-check scoring, hints by cause
PER_CHECK_SPEC = """\
format: 1
specs:
  - id: bumps
    title: bump adds k
    tag: launch-counter
    points: 3
    visibility: visible
    {scoring}
    explanation: bump(k) adds k.
    hint: Add k to cls.n.
    hints:
      launches: Count k launches, also when k is passed by keyword.
    cases:
      - id: bump-by-k
        description: bump(k) adds k, by position or by keyword.
        steps:
          - method: reset
            of: LaunchCounter
          - method: bump
            of: LaunchCounter
            args: [4]
            as: bump_four
          - method: bump
            of: LaunchCounter
            kwargs: {{k: 2}}
            as: bump_two
          - method: reset
            of: LaunchCounter
          - read: n
            of: LaunchCounter
            as: n_zero
        checks:
          - launches: {{step: bump_four, equals: 4}}
          - launches: {{step: bump_two, equals: 2}}
          - value: {{step: n_zero, equals: 0}}
"""

# bump(k=2) by keyword adds 1: the second of the three checks fails, the other two pass.
KEYWORD_BUG = """

def _bump(cls, *args, **kwargs):
    cls.n += args[0] if args else 1


LaunchCounter.bump = classmethod(_bump)
"""


def _grade(tmp_path: Path, scoring: str) -> Path:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "bumps.yaml").write_text(PER_CHECK_SPEC.format(scoring=scoring), encoding="utf-8")
    sub = tmp_path / "sub"
    sub.mkdir()
    source = (REPO / "reference" / "cudagraph.py").read_text(encoding="utf-8")
    (sub / "cudagraph.py").write_text(source + KEYWORD_BUG, encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.run(
        [str(GRAPHGRADE), "grade", str(sub), "--specs", str(specs), "--out", str(out), "--no-cache"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return out / "sub"


def test_per_check_scoring_earns_the_passed_checks_share_in_every_output(tmp_path):
    out = _grade(tmp_path, "scoring: per-check")
    report = read_report(out / "report.json")  # written and checked against the schema
    (case,) = report.cases
    assert case.status == "failed"
    assert (case.scoring, case.checks_passed, case.checks_total) == ("per-check", 2, 3)
    assert case.score == 2.0 and case.max_score == 3.0 and report.score == 2.0
    assert report.specs[0].scoring == "per-check" and report.specs[0].score == 2.0
    failed = [k for k in case.checks if not k.passed]
    assert [(k.id, k.check, k.cause) for k in failed] == [("launches#1", 1, "launches")]
    assert [k.id for k in case.checks if k.passed] == ["launches#0", "value#2"]
    gradescope = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert gradescope["score"] == 2.0 and [t["score"] for t in gradescope["tests"]] == [2.0]
    assert "partial credit: 2 of 3 checks" in (out / "report.html").read_text(encoding="utf-8")
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="score" value="2" />' in junit and "partial credit: 2 of 3 checks" in junit
    rows = list(csv.DictReader((out.parent / "grades.csv").read_text(encoding="utf-8").splitlines()))
    assert [(r["bumps"], r["total"], r["max"]) for r in rows] == [("2", "2", "3")]
    # the hint is the one for the first failed record's cause key (launches), not the spec's
    assert case.hint == "Count k launches, also when k is passed by keyword."
    assert "Count k launches, also when k is passed by keyword." in (out / "report.html").read_text(encoding="utf-8")


def test_whole_case_scoring_is_the_default_all_or_nothing(tmp_path):
    out = _grade(tmp_path, "")
    report = read_report(out / "report.json")
    (case,) = report.cases
    assert (case.scoring, case.checks_passed, case.checks_total, case.score) == ("whole-case", 0, 0, 0.0)
    assert "partial credit" not in (out / "report.html").read_text(encoding="utf-8")


def test_check_shares_add_up_in_hundredths():
    assert [check_share(1.0, 3, n) for n in range(4)] == [0.0, 0.34, 0.67, 1.0]
    assert check_share(3.0, 3, 2) == 2.0


@pytest.mark.parametrize(
    "scoring, visibility, message",
    [
        (
            "per-case",
            "visible",
            "specs[0].scoring: unknown scoring 'per-case' (expected one of: whole-case, per-check)",
        ),
        ("[per-check]", "visible", "specs[0].scoring"),
        ("per-check", "hidden", "per-check scoring needs a visible spec (this one is hidden)"),
    ],
)
def test_a_bad_scoring_is_one_line_naming_file_and_line(scoring, visibility, message):
    text = PER_CHECK_SPEC.format(scoring=f"scoring: {scoring}").replace(
        "visibility: visible", f"visibility: {visibility}"
    )
    with pytest.raises(SpecError) as info:
        load_spec_text(text, "bumps.yaml")
    error = str(info.value)
    assert error.startswith("bumps.yaml:8: ") and "\n" not in error
    assert message in error
