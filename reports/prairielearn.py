"""PrairieLearn: ``results.json`` for one external-grading job.

The format is PrairieLearn's external grading results (docs: "External Grading",
section "Grading results"): ``gradable``; when gradable, ``score`` in [0, 1];
when not, ``format_errors`` (the student is not charged an attempt); ``message``
and ``output`` for the whole job; ``tests[]`` with ``name``, ``description``,
``points``, ``max_points``, ``message`` and ``output``, which the
``<pl-external-grader-results>`` element renders.

Two rules shape the text:

- a hidden case is one bit: ``Passed.`` or :data:`HIDDEN_NOT_PASSED`, nothing
  else (no description, no output, not even the grader's message for it);
- the file stays under PrairieLearn's 1 MB limit whatever the submission
  printed: :func:`fit_budget` cuts the longest free texts (outputs, then
  messages) until the encoded JSON fits :data:`RESULTS_BUDGET` bytes.
"""

from __future__ import annotations

import json
import math
from typing import Any

from grader.judging.results import Report

from .keyed_text import case_text_with_key
from .view import case_views, clean_text, fmt_percent, fmt_points, tag_groups

# PrairieLearn drops results over 1 MB; leave room for the transport around them.
RESULTS_BUDGET = 900_000
HIDDEN_PASSED = "Passed."
HIDDEN_NOT_PASSED = "Not passed. This case is hidden: only whether it passes is shown."
HIDDEN_DESCRIPTION = "A hidden case: only whether it passes is shown."
GRADER_PROBLEM = "The autograder itself had a problem with this submission; you were not charged an attempt. Please tell the course staff."


def _num(x: float) -> float:
    x = float(x)
    return round(x, 4) if math.isfinite(x) else 0.0


def not_gradable(report: Report) -> bool:
    """No case could run because of a submission-wide problem (no module file, a syntax
    error or an exception at import, an import that never ends): PrairieLearn should not
    charge an attempt for it. A submission that imported and then failed cases is gradable."""
    return (
        bool(report.problem)
        and bool(report.cases)
        and all(c.status == "error" and c.message == report.problem for c in report.cases)
    )


def _overview(report: Report) -> str:
    n = len(report.cases)
    ok = sum(1 for c in report.cases if c.status == "passed")
    lines = [
        f"graphgrade: {fmt_points(report.score)} / {fmt_points(report.max_score)} points ({fmt_percent(report.percent)}); {ok} of {n} cases pass."
    ]
    if report.problem:
        lines += ["", "Your submission could not be graded completely:", clean_text(report.problem)]
    for group in tag_groups(report.specs):
        lines += ["", f"{group.title}: {fmt_points(group.score)} / {fmt_points(group.max_score)}"]
        for t in group.tags:
            lines.append(f"  {t.label}: {fmt_points(t.score)} / {fmt_points(t.max_score)}")
    if report.problem and report.output_tail.strip():
        lines += ["", "Output of your code at import (last lines):", clean_text(report.output_tail).rstrip()]
    return "\n".join(lines)


def to_prairielearn(report: Report, budget: int = RESULTS_BUDGET) -> dict[str, Any]:
    """The report as PrairieLearn's ``results.json`` object, at most ``budget`` bytes as UTF-8 JSON."""
    if not isinstance(report, Report):
        raise TypeError(f"expected a grader.judging.results.Report, got {type(report).__name__}")
    if not_gradable(report):
        problem = clean_text(report.problem)
        output = clean_text(report.output_tail).rstrip()
        return fit_budget(
            {
                "gradable": False,
                "format_errors": [problem],
                "message": "Your submission could not be graded, so no attempt was used: " + problem,
                "output": ("Output of your code at import (last lines):\n" + output) if output else "",
                "tests": [],
            },
            budget,
        )
    specs = {s.id: s for s in report.specs}
    tests = []
    for view in case_views(report):
        spec = specs.get(view.spec)
        title = clean_text(spec.title) if spec else clean_text(view.spec)
        if view.redacted:  # one bit, and a fixed text: nothing a hidden case did reaches the student
            description, message, output = HIDDEN_DESCRIPTION, HIDDEN_PASSED if view.passed else HIDDEN_NOT_PASSED, ""
        else:
            description = view.description or (clean_text(spec.explanation) if spec else "")
            message = view.message or ("Passed." if view.passed else "Failed.")
            output = "" if view.passed else case_text_with_key(view, spec.hint if spec else "")
        tests.append(
            {
                "name": f"{title} ({clean_text(view.label)})",
                "description": description,
                "points": _num(view.score),
                "max_points": _num(view.max_score),
                "message": message,
                "output": output,
            }
        )
    n_ok = sum(1 for c in report.cases if c.status == "passed")
    score = report.score / report.max_score if report.max_score > 0 else 0.0
    return fit_budget(
        {
            "gradable": True,
            "score": min(1.0, max(0.0, _num(score))),
            "message": f"{fmt_points(report.score)} / {fmt_points(report.max_score)} points; {n_ok} of {len(report.cases)} cases pass.",
            "output": _overview(report),
            "tests": tests,
        },
        budget,
    )


def grader_problem_results(detail: str = "") -> dict[str, Any]:
    """``results.json`` when the grader (not the submission) failed: not gradable, so not charged."""
    return {"gradable": False, "format_errors": [GRADER_PROBLEM], "message": GRADER_PROBLEM, "output": "", "tests": []}


def encoded_size(results: dict[str, Any]) -> int:
    return len(dumps(results).encode("utf-8"))


def dumps(results: dict[str, Any]) -> str:
    return json.dumps(results, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    note = f"\n[... {len(text) - limit} characters cut to keep the results under PrairieLearn's 1 MB limit]"
    return text[: max(0, limit)] + note


def fit_budget(results: dict[str, Any], budget: int = RESULTS_BUDGET) -> dict[str, Any]:
    """Cut free texts until the encoded results fit ``budget`` bytes: first every test's
    ``output``, then the job's ``output``, then messages, halving their limits each round.
    Names, points and the score are never touched, so the grade is the same at any size."""
    if encoded_size(results) <= budget:
        return results
    limit = 16_000
    while True:
        out = dict(results)
        out["output"] = _cut(results.get("output", ""), 4 * limit)
        out["message"] = _cut(results.get("message", ""), max(limit, 200))
        if "format_errors" in results:
            out["format_errors"] = [_cut(e, max(limit, 200)) for e in results["format_errors"]]
        out["tests"] = [
            {
                **t,
                "output": _cut(t["output"], limit),
                "message": _cut(t["message"], max(limit, 200)),
                "description": _cut(t["description"], max(limit, 200)),
            }
            for t in results.get("tests", [])
        ]
        if encoded_size(out) <= budget:
            return out
        if limit == 0:
            break
        limit //= 2
    # Only names are left to cut: every test's name to 200 characters, then nothing but the grade.
    out["tests"] = [
        {**t, "name": _cut(t["name"], 200), "output": "", "message": t["message"][:200], "description": ""}
        for t in out["tests"]
    ]
    if encoded_size(out) > budget:
        out["tests"] = []
        out["output"] = "The detailed results were too large to report."
    return out
