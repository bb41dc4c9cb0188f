"""Unit tests of report.json (``grader.judging.report_writing`` and ``report_reading``): written
deterministically, read back into the same typed report, and every malformed field refused with a ReportError that
names it (a renderer never trusts a file it did not check)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from test_reports_samples import (
    any_report,  # noqa: F401 - a fixture
    hidden_report,
    passing_report,
)

from grader.judging.report_reading import MAX_TEXT, ReportError, read_report, report_from_json
from grader.judging.report_writing import report_to_json, write_report
from grader.judging.results import REPORT_FORMAT, Flag, Report


def test_report_json_holds_the_report_deterministically(any_report):
    """report.json (grader.judging.report_writing.report_json_text) holds exactly the report's fields,
    awkward text included (a lone surrogate, which orjson refuses, goes through the json module),
    each result's keys in declaration order, and the same report always gives the same text (a
    rewrite that skips unchanged reports compares it)."""
    import dataclasses

    from grader.judging.report_writing import report_json_text

    odd = replace(
        any_report,
        problem='caf\u00e9 \u2028 "quoted" \\ <tag> \x00',
        flags=(Flag("rule", "a.py", 3, "\u4e2d\u6587"),),
    )
    surrogate = replace(any_report, output_tail="a student's message \ud800 with a lone surrogate")
    for report in (any_report, odd, surrogate, Report("empty", 0.0, 0.0, (), ())):
        text = report_json_text(report)
        assert text.endswith("}\n")
        assert text == report_json_text(replace(report))  # an equal report, the same bytes
        expected = json.loads(json.dumps(dataclasses.asdict(report)))
        assert json.loads(text) == expected
        assert list(json.loads(text)) == [f.name for f in dataclasses.fields(Report)]
        assert report_from_json(json.loads(text)) == report
        assert report_to_json(report) == dataclasses.asdict(report)
    assert "caf\u00e9" in report_json_text(odd)  # UTF-8 as is (the file is written as UTF-8)


def _staff_report() -> Report:
    """A report using every field a format-2 report may hold."""
    return replace(
        hidden_report(),
        path="section1/dave",
        flags=(Flag("reads-reference", "cudagraph.py", 12, "opens a file outside the submission"),),
        scope="public",
        ungraded_points=3.0,
    )


def test_a_written_report_reads_back_equal(tmp_path):
    report = _staff_report()
    path = tmp_path / "report.json"
    write_report(report, path)
    assert read_report(path) == report
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == REPORT_FORMAT


def test_without_timing_no_duration_is_written():
    """``timing=False`` drops the wall-clock fields (they differ from run to run), at both levels."""
    data = report_to_json(passing_report(), timing=False)
    assert "duration_s" not in data and all("duration_s" not in c for c in data["cases"])
    assert report_from_json(json.loads(json.dumps(data))).duration_s == 0.0  # and such a report still reads


def _data() -> dict:
    return json.loads(json.dumps(report_to_json(_staff_report())))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["cases"][0].update(status="passd"), "report.cases[0].status: 'passd' is not one of passed"),
        (lambda d: d["cases"][1].update(visibility="secret"), "report.cases[1].visibility: 'secret' is not one of"),
        (lambda d: d.update(score=True), "report.score: expected float, got bool"),
        (lambda d: d.update(score="10"), "report.score: expected float, got str"),
        (lambda d: d["specs"][0].pop("hint"), "report.specs[0]: missing key 'hint'"),
        (lambda d: d.update(extra=1), "report: unknown key 'extra'"),
        (lambda d: d["cases"][0].update(message="x" * (MAX_TEXT + 1)), f"longer than {MAX_TEXT} characters"),
        (lambda d: d.update(format=5), "this grader reads formats 1, 2, 3, 4, the file says 5"),
        (lambda d: d.update(format=1), "report.flags: format 1 has no flags"),
        (lambda d: d["flags"][0].update(line=-1), "report.flags[0].line: expected a line number (0 or more)"),
        (lambda d: d.update(scope="some"), "report.scope: 'some' is not 'all' or 'public'"),
        (lambda d: d["cases"][0].update(steps=[{"index": 0, "action": "a"}]), "report.cases[0].steps[0]: missing"),
        (lambda d: d["cases"][0].update(checks=[7]), "report.cases[0].checks[0]: expected an object, got int"),
        (lambda d: d.update(cases={}), "report.cases: expected list, got dict"),
    ],
)
def test_a_malformed_field_is_refused_by_name(edit, message):
    data = _data()
    edit(data)
    with pytest.raises(ReportError) as info:
        report_from_json(data)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_format_1_report_without_flags_still_reads():
    data = _data()
    data.update(format=1)
    del data["flags"], data["scope"], data["ungraded_points"]
    report = report_from_json(data)
    assert (report.format, report.flags, report.scope) == (1, (), "all")


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_a_non_finite_score_is_written_null_and_refused_on_reading(tmp_path, number, monkeypatch):
    """A number that is not finite (one the grader never computes) is written null; the reader
    refuses it, naming the field, as it refused the NaN the json module wrote before."""
    from grader.judging.report_schema import SCHEMA_ENV, SchemaMismatch
    from grader.judging.report_writing import report_json_text

    with pytest.raises(SchemaMismatch, match="at score"):  # while the tests run, the schema refuses it first
        report_json_text(replace(passing_report(), score=number))
    monkeypatch.delenv(SCHEMA_ENV)

    text = report_json_text(replace(passing_report(), score=number))
    assert json.loads(text)["score"] is None
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReportError, match=r"report\.score: expected float, got NoneType"):
        read_report(path)


def test_read_report_names_the_file(tmp_path):
    missing = tmp_path / "nope" / "report.json"
    with pytest.raises(ReportError, match=f"{missing}: cannot read"):
        read_report(missing)
    bad = tmp_path / "report.json"
    bad.write_text('{"format": 2,')
    with pytest.raises(ReportError, match=f"{bad}: not valid JSON"):
        read_report(bad)


def test_read_report_refuses_a_file_over_the_size_bound_before_reading_it(tmp_path, monkeypatch):
    monkeypatch.setitem(read_report.__globals__, "MAX_REPORT_BYTES", 100)  # the bound read_report reads
    path = tmp_path / "report.json"
    write_report(passing_report(), path)
    with pytest.raises(ReportError, match="larger than the 100 bytes a report may have"):
        read_report(path)


def test_percent_of_nothing_is_zero():
    assert Report("empty", 0.0, 0.0, (), ()).percent == 0.0
    assert Report("half", 1.0, 2.0, (), ()).percent == 50.0
