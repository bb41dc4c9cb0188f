"""JUnit XML for CI (GitHub Classroom, GitLab, Jenkins): one test suite per submission."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from grader.judging.results import Report

from .view import case_text, case_views, clean_text, fmt_points, spec_titles, student_duration

_ERROR_STATUSES = ("error", "timeout", "crashed")


def _t(seconds: float) -> str:
    return f"{max(0.0, seconds or 0.0):.3f}"


def to_junit_xml(report: Report) -> str:
    """The report as a JUnit XML document (``<testsuites>`` holding one ``<testsuite>``).

    Each case is a ``<testcase classname="<spec id>" name="<case id>">``;
    ``failed`` adds ``<failure>``, ``error``/``timeout``/``crashed`` add
    ``<error type="<status>">``, ``skipped`` adds ``<skipped/>``. JUnit is read by
    students (GitHub Classroom), so a hidden case is one bit: ``Hidden case N``, passed or a
    ``<failure>`` with one fixed message, no timing.
    """
    if not isinstance(report, Report):
        raise TypeError(f"expected a grader.judging.results.Report, got {type(report).__name__}")
    views = case_views(report)
    specs = spec_titles(report)
    counts = {
        "tests": len(views),
        "failures": sum(1 for c in views if c.status == "failed"),
        "errors": sum(1 for c in views if c.status in _ERROR_STATUSES),
        "skipped": sum(1 for c in views if c.status == "skipped"),
    }
    total_time = sum(c.duration_s for c in views) or student_duration(report)  # hidden cases: no timing
    name = clean_text(report.submission) or "submission"
    root = ET.Element(
        "testsuites", {"name": "graphgrade", **{k: str(n) for k, n in counts.items()}, "time": _t(total_time)}
    )
    suite = ET.SubElement(
        root, "testsuite", {"name": name, **{k: str(n) for k, n in counts.items()}, "time": _t(total_time)}
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("score", fmt_points(report.score)),
        ("max_score", fmt_points(report.max_score)),
        ("grader_version", clean_text(report.grader_version)),
    ):
        ET.SubElement(props, "property", {"name": key, "value": value})
    if report.problem:
        ET.SubElement(props, "property", {"name": "problem", "value": clean_text(report.problem)})
    for c in views:
        spec = specs.get(c.spec)
        case = ET.SubElement(
            suite, "testcase", {"classname": clean_text(c.spec), "name": clean_text(c.label), "time": _t(c.duration_s)}
        )
        if c.passed:
            continue
        message = c.message or c.status
        body = case_text(c, spec.hint if spec else "")
        if c.status == "failed":
            el = ET.SubElement(case, "failure", {"message": message, "type": "failed"})
            el.text = body
        elif c.status in _ERROR_STATUSES:
            el = ET.SubElement(case, "error", {"message": message, "type": c.status})
            el.text = body
        else:
            ET.SubElement(case, "skipped", {"message": message})
    if report.output_tail and report.problem:
        ET.SubElement(suite, "system-out").text = clean_text(report.output_tail)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
