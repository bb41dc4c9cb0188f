"""Tests of ``reports/`` as a whole: the HTML pages, the files written together, and what every
format agrees on (numbers, hidden cases). Each format's own unit tests are in test_gradescope,
test_junit and test_csv_export; the view helpers' in test_view_*; report.json's in test_results."""

from __future__ import annotations

import csv
import json
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import html5lib
import jinja2
import pytest
from test_reports_samples import (
    REPLAY_FAIL,
    SCRIPT,
    SECRET_NUMBER,
    SECRETS,
    all_reports,
    any_report,  # noqa: F401 - a fixture
    crashing_report,
    failing_report,
    hidden_report,
    make_report,
    passing_report,
    problem_report,
)

from grader.judging.report_reading import report_from_json
from grader.judging.report_writing import report_to_json
from grader.judging.results import LaunchPoint, Report
from grader.lab import active as _active_lab
from reports import (
    render_submission,
    render_summary,
    to_gradescope,
    to_junit_xml,
    write_batch_outputs,
    write_submission_outputs,
)
from reports import view as _view
from reports.csv_export import grades_csv
from reports.html import TEMPLATE_DIR, environment, safe_href

REPO = Path(__file__).resolve().parents[1]
HTML_NS = "{http://www.w3.org/1999/xhtml}"


def strict_parse(text: str):
    """Parse with html5lib in strict mode: any HTML parse error raises."""
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=True).parse(text)


def text_of(el) -> str:
    return "".join(el.itertext())


def find_by_id(doc, ident: str):
    for el in doc.iter():
        if el.get("id") == ident:
            return el
    raise AssertionError(f"no element with id {ident!r}")


def by_class(doc, cls: str):
    return [el for el in doc.iter() if cls in (el.get("class") or "").split()]


# ---------------------------------------------------------------------------
# The Jinja environment


def test_environment_forces_autoescape_and_strict_undefined():
    env = environment()
    assert env.autoescape is True  # forced on, not chosen by file extension
    assert env.undefined is jinja2.StrictUndefined
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ nope }}").render()
    assert env.from_string("{{ x }}").render(x="<b>&") == "&lt;b&gt;&amp;"


def test_every_template_is_j2_and_autoescaped():
    names = sorted(p.name for p in TEMPLATE_DIR.iterdir() if p.is_file())
    assert names and all(n.endswith(".j2") for n in names)
    env = environment()
    for name in names:
        template = env.get_template(name)
        assert template.environment.autoescape is True
    # A page template missing its variables fails loudly instead of rendering blanks.
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("submission.html.j2").render()
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("summary.html.j2").render()


def test_renderers_take_typed_reports_only():
    data = report_to_json(passing_report())
    with pytest.raises(TypeError):
        render_submission(data)  # a dict is not a Report
    with pytest.raises(TypeError):
        render_summary([data], ["x/report.html"])
    with pytest.raises(TypeError):
        to_gradescope(data)
    with pytest.raises(TypeError):
        to_junit_xml(data)


# ---------------------------------------------------------------------------
# HTML: one submission


def test_submission_html_is_valid_and_self_contained(any_report):
    page = render_submission(any_report)
    strict_parse(page)
    low = page.lower()
    assert low.startswith("<!doctype html>")
    assert '<meta name="viewport"' in low
    assert "@media print" in page and "@media (max-width" in page
    assert "<style>" in page
    for bad in ("<script", "<link", "<img", "<iframe", "src=", "url(", "@import", "http://", "https://"):
        assert bad not in low, bad
    assert "<svg" in page  # the score ring at least


def test_score_is_shown_big(any_report):
    doc = strict_parse(render_submission(any_report))
    score = text_of(find_by_id(doc, "score"))
    assert score.startswith(f"{_view.fmt_points(any_report.score)} / {_view.fmt_points(any_report.max_score)}")


def test_passed_cases_collapse_to_one_line():
    report = passing_report()
    doc = strict_parse(render_submission(report))
    lines = by_class(doc, "passline")
    assert len(lines) == len(report.cases)
    assert not by_class(doc, "case") and not by_class(doc, "check")
    assert not by_class(doc, "hint")  # nothing to fix, so no hint
    assert "Every case passes" in render_submission(report)


def test_failed_case_shows_steps_checks_hint_launches_and_output():
    report = failing_report()
    page = render_submission(report)
    doc = strict_parse(page)
    text = text_of(doc)
    # steps, action and outcome
    for st in REPLAY_FAIL.steps:
        assert st.action in text and st.outcome in text
    # checks: expected next to observed
    bad = [el for el in by_class(doc, "check") if "bad" in el.get("class").split()]
    assert len(bad) == sum(1 for c in report.cases for k in c.checks if not k.passed)
    first = bad[0]
    assert "buffer #1 (the static input)" in text_of(first) and "buffer #2 (a new array)" in text_of(first)
    # the spec hint and explanation
    spec = next(s for s in report.specs if s.id == "replay-one-launch")
    assert spec.hint in text and spec.explanation in text
    # one launch picture per non-passed case that has launches
    figures = [el for el in doc.iter(f"{HTML_NS}figure") if "launches" in el.get("class").split()]
    assert len(figures) == sum(1 for c in report.cases if c.launches and c.status != "passed")
    assert "Launches differ at 2 steps" in text
    # output tail, escaped in a <pre>
    assert any("captured graph for (4, 8)" in text_of(p) for p in doc.iter(f"{HTML_NS}pre"))
    # statuses in words
    for word in ("Failed", "Timed out", "Skipped"):
        assert word in text
    # the behaviour summary covers core and stretch tags in the fixed order
    names = [text_of(el) for el in by_class(doc, "name")]
    assert names == [_view.tag_label(t) for t in _active_lab().tags if t in {s.tag for s in report.specs}]


def test_crash_output_is_escaped_not_executed():
    report = crashing_report()
    page = render_submission(report)
    assert SCRIPT not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>not bold</b>" not in page
    # Control characters never reach the page; a NUL reads as \x00, the way Python writes it.
    assert "\x00" not in page and "\x1b" not in page and "\x07" not in page
    assert "NUL\\x00 and a bell\\x07" in page
    doc = strict_parse(page)
    pres = [text_of(p) for p in doc.iter(f"{HTML_NS}pre")]
    assert any(SCRIPT in p and "Traceback (most recent call last)" in p for p in pres)  # shown as text
    assert not list(doc.iter(f"{HTML_NS}script"))
    assert "Crashed" in text_of(doc)


def test_submission_name_is_escaped():
    report = replace(passing_report(), submission="<b>mallory</b> & co")
    page = render_submission(report)
    assert "<b>mallory</b>" not in page
    assert "&lt;b&gt;mallory&lt;/b&gt; &amp; co" in page
    strict_parse(page)
    summary = render_summary([report], ["mallory/report.html"])
    assert "<b>mallory</b>" not in summary and "&lt;b&gt;mallory&lt;/b&gt;" in summary
    strict_parse(summary)


def test_problem_banner():
    report = problem_report()
    doc = strict_parse(render_submission(report))
    banners = by_class(doc, "problem")
    assert len(banners) == 1
    assert "SyntaxError: invalid syntax (cudagraph.py, line 17)" in text_of(banners[0])
    assert "def __call__(self x):" in text_of(banners[0])
    assert not by_class(strict_parse(render_submission(passing_report())), "problem")


def test_stranger_text_stays_valid_html():
    """Surrogates, non-characters, C1 controls and CR from a hostile worker still give a valid page."""
    nasty = "a\ud800b\ufffe\uffffc\x85d\x9fe\r\nf\x0bg\U0001fffe h\u2028i"
    case = replace(REPLAY_FAIL, message=nasty, output_tail=nasty, description=nasty)
    report = make_report(nasty, [case])
    page = render_submission(report)
    strict_parse(page)
    page.encode("utf-8")  # no lone surrogates left
    strict_parse(render_summary([report], ["x/report.html"]))
    ET.fromstring(to_junit_xml(report).encode("utf-8"))
    json.dumps(to_gradescope(report), ensure_ascii=False).encode("utf-8")
    grades_csv([report]).encode("utf-8")


def test_empty_report_renders():
    report = Report(submission="empty", score=0.0, max_score=0.0, cases=(), specs=())
    strict_parse(render_submission(report))
    strict_parse(render_summary([], []))
    assert to_gradescope(report)["tests"] == []
    assert ET.fromstring(to_junit_xml(report)).get("tests") == "0"


def test_report_read_back_renders_the_same(any_report):
    again = report_from_json(json.loads(json.dumps(report_to_json(any_report))))
    assert render_submission(again) == render_submission(any_report)
    assert to_gradescope(again) == to_gradescope(any_report)


# ---------------------------------------------------------------------------
# Redacted (hidden) cases: defence in depth


def _all_outputs(report: Report, tmp_path: Path) -> dict[str, str]:
    out = tmp_path / "out"
    write_submission_outputs(report, out / "sub")
    write_batch_outputs([report], [out / "sub"], out)
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(out.rglob("*")) if p.is_file()}


def _student_facing(report: Report, tmp_path: Path) -> dict[str, str]:
    """What a student can read: report.html, junit.xml, and the Gradescope tests that are not
    staff-only (visibility "hidden") with the top-level output."""
    files = _all_outputs(report, tmp_path)
    gs = json.loads(files["results.json"])
    gs["tests"] = [t for t in gs["tests"] if t["visibility"] != "hidden"]
    return {"report.html": files["report.html"], "junit.xml": files["junit.xml"], "results.json": json.dumps(gs)}


def test_redacted_details_appear_in_no_student_output_and_in_every_staff_output(tmp_path):
    report = hidden_report()
    redacted = next(c for c in report.cases if c.redacted)
    leftovers = json.dumps(report_to_json(report))
    assert all(secret in leftovers for secret in SECRETS)  # report.json: the staff's full record
    files = _all_outputs(report, tmp_path)
    assert set(files) == {
        "report.json",
        "report.html",
        "staff.html",
        "results.json",
        "junit.xml",
        "summary.html",
        "grades.csv",
    }
    for name, text in _student_facing(report, tmp_path).items():
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} leaked into {name}"
    # The student sees one bit and the one fixed message; not the grader's own message.
    doc = strict_parse(files["report.html"])
    hidden = by_class(doc, "hidden-case")
    assert len(hidden) == 1
    shown = text_of(hidden[0])
    assert _view.HIDDEN_NOT_PASSED in shown and redacted.message not in shown and "Not passed" in shown
    assert "Batches pad up to the nearest capture size" in shown
    assert not list(hidden[0].iter(f"{HTML_NS}pre")) and not list(hidden[0].iter(f"{HTML_NS}figure"))
    assert all("icon" in (s.get("class") or "") for s in hidden[0].iter(f"{HTML_NS}svg"))
    assert not by_class(hidden[0], "check") and not by_class(hidden[0], "steps")
    junit = ET.fromstring(files["junit.xml"])
    failure = next(tc for tc in junit.iter("testcase") if tc.find("failure") is not None).find("failure")
    assert failure.text == _view.HIDDEN_NOT_PASSED
    # Staff see it all: staff.html and the staff-only Gradescope test carry steps, checks, output.
    for secret in SECRETS:
        assert secret in files["staff.html"], f"{secret!r} missing from staff.html"
    gs = json.loads(files["results.json"])
    test = next(t for t in gs["tests"] if t["visibility"] == "hidden" and t["status"] == "failed")
    assert (
        redacted.message in test["output"]
        and SECRET_NUMBER in test["output"]
        and "hidden from students" in test["name"]
    )
    assert redacted.message in files["summary.html"]


def test_hidden_cases_placed_where_students_see_them_are_one_bit(tmp_path):
    report = hidden_report()
    gs = to_gradescope(report, hidden_visibility="after_published")
    (test,) = [t for t in gs["tests"] if t["status"] == "failed"]
    assert test["visibility"] == "after_published" and test["output"] == _view.HIDDEN_NOT_PASSED
    assert not any(secret in json.dumps(gs) for secret in SECRETS)


def test_redacted_passing_case_shows_nothing_either(tmp_path):
    report = hidden_report()
    cases = tuple(replace(c, status="passed", score=c.max_score) if c.redacted else c for c in report.cases)
    report = make_report("dave", list(cases))
    for name, text in _student_facing(report, tmp_path).items():
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} leaked into {name}"


def test_case_views_strip_redacted_fields():
    report = hidden_report()
    (view,) = [v for v in _view.case_views(report) if v.redacted]
    assert view.steps == () and view.checks == () and view.launches == ()
    assert view.output_tail == "" and view.description == ""
    assert view.label == "Hidden case 1"


# ---------------------------------------------------------------------------
# Numbers agree across formats


def test_numbers_agree_across_formats(any_report, tmp_path):
    report = any_report
    out = tmp_path / report.submission
    write_submission_outputs(report, out)
    write_batch_outputs([report], [out], tmp_path)
    pts = _view.fmt_points

    doc = strict_parse((out / "report.html").read_text(encoding="utf-8"))
    assert text_of(find_by_id(doc, "score")).startswith(f"{pts(report.score)} / {pts(report.max_score)}")

    gs = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert math.isclose(gs["score"], report.score)
    assert math.isclose(sum(t["score"] for t in gs["tests"]), report.score, abs_tol=1e-6)
    assert math.isclose(sum(t["max_score"] for t in gs["tests"]), report.max_score, abs_tol=1e-6)
    assert sum(t["status"] == "failed" for t in gs["tests"]) == sum(c.status != "passed" for c in report.cases)

    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["total"] == pts(report.score) and rows[0]["max"] == pts(report.max_score)
    for s in report.specs:
        assert rows[0][s.id] == pts(s.score)

    suite = ET.fromstring((out / "junit.xml").read_text(encoding="utf-8")).find("testsuite")
    not_passed = sum(c.status != "passed" for c in report.cases)
    assert int(suite.get("tests")) == len(report.cases)
    assert int(suite.get("failures")) + int(suite.get("errors")) + int(suite.get("skipped")) == not_passed
    assert int(suite.get("failures")) == sum(c.status == "failed" for c in report.cases)

    summary = strict_parse((tmp_path / "summary.html").read_text(encoding="utf-8"))
    assert f"{pts(report.score)} / {pts(report.max_score)}" in text_of(summary)


# ---------------------------------------------------------------------------
# Summary page


def test_summary_page(tmp_path):
    reports = all_reports()
    dirs = [tmp_path / "subs" / r.submission for r in reports]
    for r, d in zip(reports, dirs):
        write_submission_outputs(r, d)
    write_batch_outputs(reports, dirs, tmp_path)
    page = (tmp_path / "summary.html").read_text(encoding="utf-8")
    doc = strict_parse(page)
    text = text_of(doc)
    assert text_of(find_by_id(doc, "n-submissions")) == str(len(reports))
    # histogram
    assert "Submissions per score band" in text and "90\u2013100" in text
    # pass rate per spec and per behaviour
    for s in reports[0].specs:
        assert s.title in text
    for t in {s.tag for s in reports[0].specs}:
        assert _view.tag_label(t) in text
    # grouped, counted failure messages (redacted ones as they are)
    assert "Skipped: InferenceGraphCapture is not defined." in text
    assert "A hidden padding case failed" in text
    assert "Not run: cudagraph.py could not be imported." in text
    causes = find_by_id(doc, "causes-table")
    rows = [[text_of(td) for td in tr.iter(f"{HTML_NS}td")] for tr in causes.iter(f"{HTML_NS}tr")]
    assert any(r and r[0] == "2" and "InferenceGraphCapture is not defined" in r[1] for r in rows)  # bob's two, one row
    # every student, with relative links (report and staff view) that resolve
    students = find_by_id(doc, "students")
    links = [a.get("href") for a in doc.iter(f"{HTML_NS}a") if not a.get("href").startswith("#")]
    assert {h for h in links if h.endswith("/report.html")} == {f"subs/{r.submission}/report.html" for r in reports}
    assert {h for h in links if h.endswith("/staff.html")} >= {f"subs/{r.submission}/staff.html" for r in reports}
    for href in links:
        assert not href.startswith(("/", "http")) and (tmp_path / href).is_file()
    assert students is not None and find_by_id(doc, "causes") is not None
    for r in reports:
        assert _view.fmt_percent(r.percent) in text
    # grades.csv next to it
    rows = list(csv.reader((tmp_path / "grades.csv").open(newline="", encoding="utf-8")))
    assert len(rows) == len(reports) + 1


def test_summary_links_are_quoted_and_never_external(tmp_path):
    r = passing_report("with space #1")
    d = tmp_path / "with space #1"
    write_submission_outputs(r, d)
    write_batch_outputs([r], [d], tmp_path)
    page = (tmp_path / "summary.html").read_text(encoding="utf-8")
    assert 'href="with%20space%20%231/report.html"' in page
    for bad in ("javascript:alert(1)", "https://evil.example/x", "//evil.example/x", "C:\\x\\report.html"):
        assert safe_href(bad) == ""
        page = render_summary([r], [bad])
        assert bad not in page and not re.search(r'href="(?!#)', page)
    assert safe_href("a/b/report.html") == "a/b/report.html"
    with pytest.raises(ValueError):
        render_summary([r], [])
    with pytest.raises(ValueError):
        write_batch_outputs([r], [], tmp_path)


# ---------------------------------------------------------------------------
# Pure helpers


def test_launch_chart_geometry():
    pts = (
        LaunchPoint(0, "capture", 3, 3),
        LaunchPoint(1, "replay", 1, 3),
        LaunchPoint(2, "a very long label indeed", None, 2),
        LaunchPoint(3, "", 1, None),
    )
    ch = _view.launch_chart(pts)
    assert ch.n_mismatch == 2  # replay differs, and the unreached last step differs
    g = ch.groups
    assert g[0].match and not g[1].match and g[2].match and not g[3].match
    assert g[1].observed.h > g[1].expected.h > 0
    assert g[2].expected.kind == "missing" and g[3].observed.kind == "missing"
    assert g[2].label.endswith("\u2026") and g[3].label == "step 4"
    assert all(t.value >= 0 for t in ch.ticks) and ch.ticks[-1].value >= 3
    assert _view.launch_chart(()) is None


def test_write_submission_outputs(tmp_path):
    report = failing_report()
    out = tmp_path / "deep" / "bob"
    write_submission_outputs(report, out)
    assert sorted(p.name for p in out.iterdir()) == [
        "junit.xml",
        "report.html",
        "report.json",
        "results.json",
        "staff.html",
    ]
    json.loads((out / "results.json").read_text(encoding="utf-8"))
    ET.parse(out / "junit.xml")
    strict_parse((out / "report.html").read_text(encoding="utf-8"))


def test_case_without_spec_summary_is_still_shown():
    report = replace(failing_report(), specs=())
    doc = strict_parse(render_submission(report))
    assert REPLAY_FAIL.message in text_of(doc)
    assert len(by_class(doc, "spec")) == len({c.spec for c in report.cases})
