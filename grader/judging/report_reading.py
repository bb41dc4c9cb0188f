"""Reading ``report.json`` back: every field checked, bounded and typed into a
:class:`~grader.judging.results.Report`; anything else is a one-line :class:`ReportError` naming
the file and the field (a report is data, not trusted code).
"""

from __future__ import annotations

import json
from typing import Any

from grader import validation
from grader.judging.results import (
    READABLE_FORMATS,
    STATUSES,
    Answer,
    CaseResult,
    CauseAt,
    CheckLine,
    FirstCause,
    Flag,
    LaunchPoint,
    Report,
    SpecSummary,
    StepLine,
)
from grader.spec_model import READINGS, SCORINGS, VISIBILITIES

# Bounds applied when a report is read back (a report is data, not trusted code).
MAX_REPORT_BYTES = 32 * 1024 * 1024
MAX_TEXT = 64 * 1024
MAX_INT = 2**63  # integers (step indices, launch counts, format) lie in [-MAX_INT, MAX_INT)


class ReportError(validation.Invalid):
    """A report.json that is not a valid report of this format."""


def _need(obj: dict, key: str, kind, where: str):
    return validation.required(obj, key, kind, where, MAX_TEXT, MAX_INT)


def _opt(obj: dict, key: str, kind, where: str, default):
    return validation.optional(obj, key, kind, where, default, MAX_TEXT, MAX_INT)


def _opt_int(obj: dict, key: str, where: str) -> int | None:
    return validation.optional_integer(obj.get(key), f"{where}.{key}", -MAX_INT, MAX_INT)


_check_keys = validation.known_keys


def _case_from_json(obj: Any, where: str) -> CaseResult:
    obj = _check_keys(obj, {f.name for f in CaseResult.__dataclass_fields__.values()}, where)
    status = validation.one_of(_need(obj, "status", str, where), STATUSES, f"{where}.status")
    visibility = validation.one_of(obj.get("visibility", "visible"), VISIBILITIES, f"{where}.visibility")
    steps = tuple(
        StepLine(
            index=_need(
                _check_keys(s, {"index", "action", "outcome"}, f"{where}.steps[{i}]"),
                "index",
                int,
                f"{where}.steps[{i}]",
            ),
            action=_need(s, "action", str, f"{where}.steps[{i}]"),
            outcome=_need(s, "outcome", str, f"{where}.steps[{i}]"),
        )
        for i, s in enumerate(_opt(obj, "steps", list, where, []))
    )
    checks = tuple(
        _check_from_json(c, f"{where}.checks[{i}]") for i, c in enumerate(_opt(obj, "checks", list, where, []))
    )
    launches = tuple(
        LaunchPoint(
            step=_need(
                _check_keys(p, {"step", "label", "expected", "observed"}, f"{where}.launches[{i}]"),
                "step",
                int,
                f"{where}.launches[{i}]",
            ),
            label=_need(p, "label", str, f"{where}.launches[{i}]"),
            expected=_opt_int(p, "expected", f"{where}.launches[{i}]"),
            observed=_opt_int(p, "observed", f"{where}.launches[{i}]"),
        )
        for i, p in enumerate(_opt(obj, "launches", list, where, []))
    )
    return CaseResult(
        spec=_need(obj, "spec", str, where),
        case=_need(obj, "case", str, where),
        tag=_need(obj, "tag", str, where),
        status=status,
        score=_need(obj, "score", float, where),
        max_score=_need(obj, "max_score", float, where),
        message=_need(obj, "message", str, where),
        visibility=visibility,
        description=_opt(obj, "description", str, where, ""),
        redacted=_opt(obj, "redacted", bool, where, False),
        steps=steps,
        checks=checks,
        launches=launches,
        output_tail=_opt(obj, "output_tail", str, where, ""),
        duration_s=_opt(obj, "duration_s", float, where, 0.0),
        cause=_opt(obj, "cause", str, where, ""),
        origin=_opt(obj, "origin", str, where, ""),
        hint=_opt(obj, "hint", str, where, ""),
        scoring=validation.one_of(_opt(obj, "scoring", str, where, "whole-case"), SCORINGS, f"{where}.scoring"),
        checks_passed=_count(obj, "checks_passed", where),
        checks_total=_count(obj, "checks_total", where),
        origin_function=_opt(obj, "origin_function", str, where, ""),
    )


_CHECK_KEYS = frozenset(CheckLine.__dataclass_fields__)


def _check_from_json(obj: Any, where: str) -> CheckLine:
    obj = _check_keys(obj, _CHECK_KEYS, where)
    return CheckLine(
        step=_opt_int(obj, "step", where),
        what=_need(obj, "what", str, where),
        expected=_need(obj, "expected", str, where),
        observed=_need(obj, "observed", str, where),
        passed=_need(obj, "passed", bool, where),
        id=_opt(obj, "id", str, where, ""),
        check=_opt_int(obj, "check", where),
        cause=_opt(obj, "cause", str, where, ""),
        file=_opt(obj, "file", str, where, ""),
        line=_count(obj, "line", where),
        function=_opt(obj, "function", str, where, ""),
    )


def _count(obj: dict, key: str, where: str) -> int:
    value = _opt(obj, key, int, where, 0)
    if value < 0:
        raise ReportError(f"{where}.{key}: expected 0 or more, got {value}")
    return value


def _spec_from_json(obj: Any, where: str) -> SpecSummary:
    obj = _check_keys(obj, {f.name for f in SpecSummary.__dataclass_fields__.values()}, where)
    visibility = validation.one_of(_need(obj, "visibility", str, where), VISIBILITIES, f"{where}.visibility")
    return SpecSummary(
        id=_need(obj, "id", str, where),
        title=_need(obj, "title", str, where),
        tag=_need(obj, "tag", str, where),
        points=_need(obj, "points", float, where),
        visibility=visibility,
        explanation=_need(obj, "explanation", str, where),
        hint=_need(obj, "hint", str, where),
        score=_need(obj, "score", float, where),
        max_score=_need(obj, "max_score", float, where),
        reading=validation.one_of(_opt(obj, "reading", str, where, "handout"), READINGS, f"{where}.reading"),
        scoring=validation.one_of(_opt(obj, "scoring", str, where, "whole-case"), SCORINGS, f"{where}.scoring"),
    )


def report_from_json(data: Any, where: str = "report") -> Report:
    """Validate and rebuild a :class:`Report`; raises :class:`ReportError` naming the bad field."""
    try:
        return _report_from_json(data, where)
    except ReportError:
        raise
    except validation.Invalid as exc:  # what the toolkit's readers found
        raise ReportError(exc.problem, exc.where) from None


def _report_from_json(data: Any, where: str) -> Report:
    obj = _check_keys(data, {f.name for f in Report.__dataclass_fields__.values()}, where)
    fmt = _need(obj, "format", int, where)
    if fmt not in READABLE_FORMATS:
        raise ReportError(
            f"{where}.format: this grader reads formats {', '.join(map(str, READABLE_FORMATS))}, the file says {fmt}"
        )
    if fmt < 2 and "flags" in obj:
        raise ReportError(f"{where}.flags: format {fmt} has no flags")
    return Report(
        submission=_need(obj, "submission", str, where),
        score=_need(obj, "score", float, where),
        max_score=_need(obj, "max_score", float, where),
        cases=tuple(_case_from_json(c, f"{where}.cases[{i}]") for i, c in enumerate(_need(obj, "cases", list, where))),
        specs=tuple(_spec_from_json(s, f"{where}.specs[{i}]") for i, s in enumerate(_need(obj, "specs", list, where))),
        format=fmt,
        problem=_opt(obj, "problem", str, where, ""),
        output_tail=_opt(obj, "output_tail", str, where, ""),
        duration_s=_opt(obj, "duration_s", float, where, 0.0),
        grader_version=_opt(obj, "grader_version", str, where, ""),
        path=_opt(obj, "path", str, where, ""),
        flags=tuple(
            _flag_from_json(f, f"{where}.flags[{i}]") for i, f in enumerate(_opt(obj, "flags", list, where, []))
        ),
        scope=_scope(_opt(obj, "scope", str, where, "all"), where),
        ungraded_points=_opt(obj, "ungraded_points", float, where, 0.0),
        answers=tuple(
            Answer(
                slot=_need(a, "slot", str, f"{where}.answers[{i}]"),
                text=_need(a, "text", str, f"{where}.answers[{i}]"),
                verdict=_need(a, "verdict", str, f"{where}.answers[{i}]"),
            )
            for i, a in enumerate(_opt(obj, "answers", list, where, []))
            if _check_keys(a, {"slot", "text", "verdict"}, f"{where}.answers[{i}]") is not None
        ),
        first_cause=_first_cause_from_json(obj.get("first_cause"), f"{where}.first_cause"),
    )


def _cause_at_from_json(obj: Any, where: str) -> CauseAt | None:
    if obj is None:
        return None
    obj = _check_keys(obj, set(CauseAt.__dataclass_fields__), where)
    line = _need(obj, "line", int, where)
    if line < 0:
        raise ReportError(f"{where}.line: expected a line number (0 or more), got {line}")
    return CauseAt(
        case=_need(obj, "case", str, where),
        cause=_need(obj, "cause", str, where),
        text=_need(obj, "text", str, where),
        file=_need(obj, "file", str, where),
        line=line,
        function=_need(obj, "function", str, where),
    )


def _first_cause_from_json(obj: Any, where: str) -> FirstCause | None:
    if obj is None:
        return None
    obj = _check_keys(obj, {"student", "staff"}, where)
    return FirstCause(
        student=_cause_at_from_json(obj.get("student"), f"{where}.student"),
        staff=_cause_at_from_json(obj.get("staff"), f"{where}.staff"),
    )


def _flag_from_json(obj: Any, where: str) -> Flag:
    obj = _check_keys(obj, {"rule", "file", "line", "message"}, where)
    line = _need(obj, "line", int, where)
    if line < 0:
        raise ReportError(f"{where}.line: expected a line number (0 or more), got {line}")
    return Flag(
        rule=_need(obj, "rule", str, where),
        file=_need(obj, "file", str, where),
        line=line,
        message=_need(obj, "message", str, where),
    )


def _scope(value: str, where: str) -> str:
    if value not in ("all", "public"):
        raise ReportError(f"{where}.scope: {value!r} is not 'all' or 'public'")
    return value


def read_report(path) -> Report:
    """Read ``report.json`` with a size bound; errors name the file and the field."""
    from pathlib import Path

    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise ReportError(f"{p}: cannot read ({exc.strerror})") from None
    if size > MAX_REPORT_BYTES:
        raise ReportError(f"{p}: {size} bytes is larger than the {MAX_REPORT_BYTES} bytes a report may have")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except ValueError as exc:  # bad UTF-8 or JSON, or an integer over Python's digit limit
        raise ReportError(f"{p}: not valid JSON ({exc})") from None
    except RecursionError:
        raise ReportError(f"{p}: nested too deeply") from None
    try:
        return report_from_json(data)
    except ReportError as exc:
        raise ReportError(f"{p}: {exc}") from None
    except RecursionError:
        raise ReportError(f"{p}: nested too deeply") from None
