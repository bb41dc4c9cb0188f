"""Gradescope: ``results.json`` for one submission (the autograder zip is built by :mod:`grader.bundles`).

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

from grader.results import Report

from ._view import case_text, case_views, clean_text, fmt_percent, fmt_points, tag_groups

# Case visibility maps 1:1 onto Gradescope's test visibility.
VISIBILITY = {
    "visible": "visible",
    "hidden": "hidden",
    "after_due_date": "after_due_date",
    "after_published": "after_published",
}


def _num(x: float) -> float:
    x = float(x)
    return round(x, 4) if math.isfinite(x) else 0.0


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


def to_gradescope(report: Report) -> dict[str, Any]:
    """The report as a Gradescope ``results.json`` object (a dict ready for ``json.dump``).

    A redacted case is named ``<spec title> (Hidden case N)`` and its output is
    its message only; nothing else of it leaves the grader.
    """
    if not isinstance(report, Report):
        raise TypeError(f"expected a grader.results.Report, got {type(report).__name__}")
    spec_index = {s.id: i for i, s in enumerate(report.specs, start=1)}
    specs = {s.id: s for s in report.specs}
    per_spec: dict[str, int] = {}
    tests = []
    for view in case_views(report):
        spec = specs.get(view.spec)
        per_spec[view.spec] = per_spec.get(view.spec, 0) + 1
        number = f"{spec_index.get(view.spec, len(spec_index) + 1)}.{per_spec[view.spec]}"
        title = clean_text(spec.title) if spec else clean_text(view.spec)
        tests.append(
            {
                "name": f"{title} ({clean_text(view.label)})",
                "number": number,
                "score": _num(view.score),
                "max_score": _num(view.max_score),
                "status": "passed" if view.passed else "failed",
                "output": case_text(view, spec.hint if spec else ""),
                "output_format": "text",
                "tags": [clean_text(view.tag)] if view.tag else [],
                "visibility": VISIBILITY.get(view.visibility, "hidden"),
            }
        )
    return {
        "score": _num(report.score),
        "execution_time": int(round(report.duration_s)) if math.isfinite(report.duration_s) else 0,
        "output": _overview(report),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }

