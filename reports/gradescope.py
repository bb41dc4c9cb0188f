"""Gradescope: ``results.json`` for one submission (the autograder zip is built by :mod:`grader.commands.bundles`).

``results.json`` follows Gradescope's autograder specification
(https://gradescope-autograders.readthedocs.io/en/latest/specs/): top-level
``score``, ``execution_time``, ``output``, ``visibility``,
``stdout_visibility`` and a ``tests`` list whose entries carry ``name``,
``number``, ``score``, ``max_score``, ``status`` (``passed``/``failed``),
``output``, ``tags`` and ``visibility``.
"""

from __future__ import annotations

import math
from typing import Any

from grader.judging.results import Report

from .keyed_text import case_text_with_key
from .view import clean_text, fmt_percent, fmt_points, full_view, one_bit, student_duration, tag_groups

# Gradescope test visibilities. "hidden" tests are shown to staff only; the others reach the
# student (now or later), so a hidden case placed there is shown as one bit.
GRADESCOPE_VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


def _num(x: float) -> float:
    """Points in hundredths (the grader's precision): per-test scores add up to the total."""
    x = float(x)
    return round(x, 2) if math.isfinite(x) else 0.0


def execution_time(report: Report) -> int:
    """Whole seconds, rounded up: the submission's real grading time; when a hidden case ran,
    the time of the cases the student sees in full (a hidden case's timing is the submission's
    to choose, so it could signal what the case was given), as junit.xml's total says."""
    seconds = student_duration(report) or sum(c.duration_s for c in report.cases if not c.redacted)
    return math.ceil(seconds) if math.isfinite(seconds) and seconds > 0 else 0


def _overview(report: Report) -> str:
    n = len(report.cases)
    ok = sum(1 for c in report.cases if c.status == "passed")
    lines = [
        f"graphgrade: {fmt_points(report.score)} / {fmt_points(report.max_score)} points "
        f"({fmt_percent(report.percent)}); {ok} of {n} cases pass."
    ]
    if report.problem:
        lines += ["", "Your submission could not be graded completely:", clean_text(report.problem)]
        if report.output_tail.strip():
            lines += ["", "Output (last lines):", clean_text(report.output_tail).rstrip()]
    for group in tag_groups(report.specs):
        lines += ["", f"{group.title}: {fmt_points(group.score)} / {fmt_points(group.max_score)}"]
        for t in group.tags:
            lines.append(f"  {t.label}: {fmt_points(t.score)} / {fmt_points(t.max_score)}")
    return "\n".join(lines)


def to_gradescope(report: Report, hidden_visibility: str = "hidden") -> dict[str, Any]:
    """The report as a Gradescope ``results.json`` object (a dict ready for ``json.dump``).

    A visible case is a test with visibility ``visible`` and full feedback. A case of a
    ``hidden`` spec is a test with visibility ``hidden_visibility``: with ``hidden`` (the
    default; Gradescope shows those tests to staff only) it carries every detail, with any other
    visibility a student would see it, so it carries one bit (passed or not, one fixed message).
    Cases of ``after_due_date`` / ``after_published`` specs reach students later: one bit too.
    """
    if not isinstance(report, Report):
        raise TypeError(f"expected a grader.judging.results.Report, got {type(report).__name__}")
    if hidden_visibility not in GRADESCOPE_VISIBILITIES:
        raise ValueError(
            f"hidden_visibility must be one of {', '.join(GRADESCOPE_VISIBILITIES)}, not {hidden_visibility!r}"
        )
    spec_index = {s.id: i for i, s in enumerate(report.specs, start=1)}
    specs = {s.id: s for s in report.specs}
    per_spec: dict[str, int] = {}
    tests = []
    hidden_no: dict[str, int] = {}
    for case in report.cases:
        staff = full_view(case)
        if case.visibility == "visible" and not case.redacted:
            view = student = staff
            visibility = "visible"
        else:
            hidden_no[case.spec] = hidden_no.get(case.spec, 0) + 1
            student = one_bit(case, hidden_no[case.spec])
            visibility = hidden_visibility if case.visibility in ("hidden", "visible") else case.visibility
            view = staff if visibility == "hidden" else student
        spec = specs.get(view.spec)
        per_spec[view.spec] = per_spec.get(view.spec, 0) + 1
        number = f"{spec_index.get(view.spec, len(spec_index) + 1)}.{per_spec[view.spec]}"
        title = clean_text(spec.title) if spec else clean_text(view.spec)
        label = (
            student.label
            if view is student
            else f"{staff.label}, hidden from students"
            if case.redacted or case.visibility != "visible"
            else staff.label
        )
        tests.append(
            {
                "name": f"{title} ({clean_text(label)})",
                "number": number,
                "score": _num(view.score),
                "max_score": _num(view.max_score),
                "status": "passed" if view.passed else "failed",
                "output": case_text_with_key(view, spec.hint if spec else ""),
                "output_format": "text",
                "tags": [clean_text(view.tag)] if view.tag else [],
                "visibility": visibility,
            }
        )
    return {
        "score": _num(report.score),
        "execution_time": execution_time(report),
        "output": _overview(report),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }
