"""Unit tests of ``reports.junit``: well-formed JUnit XML whatever the text, one suite per
submission, and a hidden case as one bit (no inputs, no timing)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

from test_reports_samples import (
    REPLAY_FAIL,
    SCRIPT,
    SECRETS,
    any_report,  # noqa: F401 - a fixture
    crashing_report,
    hidden_report,
    make_report,
    passing_report,
    problem_report,
)

from reports.junit import to_junit_xml
from reports.view import HIDDEN_NOT_PASSED


def test_junit_structure(any_report):
    xml = to_junit_xml(any_report)
    root = ET.fromstring(xml.encode("utf-8"))
    suites = root.findall("testsuite")
    assert root.tag == "testsuites" and len(suites) == 1
    suite = suites[0]
    assert suite.get("name") == any_report.submission
    cases = suite.findall("testcase")
    assert len(cases) == len(any_report.cases)
    for el, c in zip(cases, any_report.cases):
        assert el.get("classname") == c.spec
        assert el.get("name") == ("Hidden case 1" if c.redacted else c.case)
        float(el.get("time"))
        kids = [k.tag for k in el]
        if c.status == "passed":
            assert kids == []
        elif c.status == "failed":
            assert kids == ["failure"] and el.find("failure").get("message")
        elif c.status in ("error", "timeout", "crashed"):
            assert kids == ["error"] and el.find("error").get("type") == c.status
        else:
            assert kids == ["skipped"]
    for key in ("tests", "failures", "errors", "skipped"):
        assert root.get(key) == suite.get(key)


def test_junit_escapes_and_cleans_output():
    xml = to_junit_xml(crashing_report())
    assert SCRIPT not in xml
    root = ET.fromstring(xml.encode("utf-8"))
    errors = list(root.iter("error"))
    assert errors and all(e.get("type") == "crashed" for e in errors)
    assert SCRIPT in errors[0].text and SCRIPT in errors[0].get("message")
    assert "\x00" not in xml and "\x1b" not in xml


def test_control_characters_anywhere_still_give_well_formed_xml():
    """XML 1.0 cannot hold most C0 controls even escaped: a NUL, a vertical tab or a bell in a
    name, a message or the output is shown as its Python escape, and the document parses."""
    nasty = "a\x00b\x0bc\x07d\x1b[31me\ud800"
    case = replace(REPLAY_FAIL, message=nasty, output_tail=nasty, description=nasty)
    report = make_report(nasty, [case], problem=nasty, output_tail=nasty)
    xml = to_junit_xml(report)
    root = ET.fromstring(xml.encode("utf-8"))
    failure = root.find("testsuite/testcase/failure")
    assert failure.get("message") == "a\\x00b\\x0bc\\x07de\ufffd"
    assert root.find("testsuite").get("name") == "a\\x00b\\x0bc\\x07de\ufffd"
    assert root.find("testsuite/system-out").text.startswith("a\\x00b")


def test_a_hidden_case_has_no_inputs_no_name_and_no_timing():
    report = hidden_report()
    xml = to_junit_xml(report)
    for secret in SECRETS:
        assert secret not in xml, secret
    root = ET.fromstring(xml)
    (hidden,) = [tc for tc in root.iter("testcase") if tc.get("name").startswith("Hidden case")]
    assert hidden.get("time") == "0.000"
    assert hidden.find("failure").get("message") == HIDDEN_NOT_PASSED
    # Any hidden case ran: the suite's time is not the submission's to signal through.
    assert root.find("testsuite").get("time") == f"{sum(c.duration_s for c in report.cases if not c.redacted):.3f}"


def test_scores_and_the_problem_are_suite_properties():
    root = ET.fromstring(to_junit_xml(problem_report()))
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["score"] == "0" and "SyntaxError" in props["problem"]
    assert "def __call__(self x):" in root.find("testsuite/system-out").text
    plain = ET.fromstring(to_junit_xml(passing_report()))
    assert "problem" not in {p.get("name") for p in plain.iter("property")}
    assert plain.find("testsuite/system-out") is None


def test_a_nameless_submission_still_names_its_suite():
    root = ET.fromstring(to_junit_xml(replace(passing_report(), submission="")))
    assert root.find("testsuite").get("name") == "submission"
