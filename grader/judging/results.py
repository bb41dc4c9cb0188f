"""Typed results of grading: verdicts per case, scores per spec, one report.

This is the last stage the grader owns (spec -> case -> isolated run ->
observations -> verdicts -> **report**); everything under ``reports/`` renders
from these types and nothing else. ``report.json`` is the versioned JSON form
of :class:`Report`; :func:`report_from_json` validates it on the way back in,
so a renderer never trusts a file it did not check.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass
from typing import Any, Literal

from grader import validation
from grader.spec_model import READINGS, SCORINGS, VISIBILITIES

# 2 added ``flags``, ``scope``, ``ungraded_points`` and hidden cases in full (staff record); 3 added
# each case's ``cause``, ``origin`` and ``hint``; 4 made each check line a record (``id``, ``check``,
# ``cause``, ``file``, ``line``, ``function``; ``observed`` without the location), added each case's
# and spec's ``scoring`` and a case's ``checks_passed``/``checks_total``, and the optional
# ``first_cause``. Formats 1 to 3 are still read. The schema: docs/report.schema.json.
REPORT_FORMAT = 4
READABLE_FORMATS = (1, 2, 3, 4)

Status = Literal["passed", "failed", "error", "timeout", "crashed", "skipped"]
STATUSES: tuple[str, ...] = ("passed", "failed", "error", "timeout", "crashed", "skipped")
Visibility = Literal["visible", "hidden", "after_due_date", "after_published"]  # one of spec_model.VISIBILITIES

# Bounds applied when a report is read back (a report is data, not trusted code).
MAX_REPORT_BYTES = 32 * 1024 * 1024
MAX_TEXT = 64 * 1024
MAX_INT = 2**63  # integers (step indices, launch counts, format) lie in [-MAX_INT, MAX_INT)


STEP_RUNS = "the step runs"  # CheckLine.expected of a step's own health line (a step that must not fail)


@dataclass(frozen=True)
class CheckLine:
    """One expectation of a case, judged: what was wanted against what happened. A record, not a
    sentence: renderers build what they show from these fields and never parse the texts.

    ``id`` is stable for a given spec: ``<kind>#<n>`` for the line of the case's check ``n``
    (0-based, in the spec's order; ``<kind>`` its kind), with ``.<k>`` added to the k-th line
    (k >= 2) of a check that records several, and ``step<i>.runs`` for step i's (1-based) own
    health line. Together with
    the spec and case ids it names the line across reports (``spec/case/id``)."""

    step: int | None  # index into CaseResult.steps, or None for a whole-case check
    what: str  # the claim, in words: "launches during this call", "output equals the op chain", ...
    expected: str  # what the spec wants, a short display text (already cut)
    observed: str  # what the submission did, a short display text (already cut; no location)
    passed: bool  # the status: passed, or failed
    id: str = ""  # see above; "" in reports of formats 1-3
    check: int | None = None  # index of the spec check that recorded the line; None: a step's own health
    cause: str = ""  # the cause key of a failure: the check's kind, or the step's own cause (OWN_CAUSES)
    file: str = ""  # the student's code a failed line names: file (relative to the submission), "" if none
    line: int = 0  # ... its line, 0 when none
    function: str = ""  # ... its function, "" when none or not known

    @property
    def status(self) -> str:
        return "passed" if self.passed else "failed"

    @property
    def where(self) -> str:
        """``file:line`` of the student's code the line names, or ""."""
        return f"{self.file}:{self.line}" if self.file else ""


@dataclass(frozen=True)
class StepLine:
    """One step of a case as the student should read it."""

    index: int
    action: str  # "call runner(x: float32[4, 8])"
    outcome: str  # "returned float32[4, 8]", "raised ValueError: ...", "not reached"


@dataclass(frozen=True)
class LaunchPoint:
    """Launches of one step, expected against observed (the CUDA-graph win at a glance)."""

    step: int
    label: str
    expected: int | None
    observed: int | None


@dataclass(frozen=True)
class CaseResult:
    spec: str
    case: str
    tag: str
    status: Status
    score: float
    max_score: float
    message: str  # one student-facing sentence (or a few lines) saying what went wrong
    visibility: Visibility = "visible"
    description: str = ""
    redacted: bool = False  # details withheld: the case is not visible to students
    steps: tuple[StepLine, ...] = ()
    checks: tuple[CheckLine, ...] = ()
    launches: tuple[LaunchPoint, ...] = ()
    output_tail: str = ""
    duration_s: float = 0.0
    cause: str = ""  # what failed first: a check kind or a step's own cause (grader.judging.judge)
    origin: str = ""  # the submission's file:line its first failure names, or ""
    hint: str = ""  # the spec's hint for that cause (``hints:``), or "": its spec's hint applies
    scoring: str = "whole-case"  # SCORINGS: the spec's; "per-check": ``score`` is the passed checks' shares
    checks_passed: int = 0  # per-check scoring: the spec checks that passed (0 under whole-case scoring)
    checks_total: int = 0  # per-check scoring: the case's spec checks (0 under whole-case scoring)
    origin_function: str = ""  # the function of the submission's code at ``origin``, or ""


@dataclass(frozen=True)
class SpecSummary:
    id: str
    title: str
    tag: str
    points: float
    visibility: Visibility
    explanation: str
    hint: str
    score: float
    max_score: float
    reading: str = "handout"  # grader.spec_model.READINGS: a core tag's "graphgrade" reading counts outside the core
    scoring: str = "whole-case"  # SCORINGS: a case earns all its points or none, or a share per passed check


@dataclass(frozen=True)
class Flag:
    """Something in a submission's code for staff to look at (see :mod:`grader.judging.integrity`).
    Never shown to students and never part of a score."""

    rule: str  # one of grader.judging.integrity.RULES
    file: str  # relative to the submission
    line: int  # 0 when not about one line
    message: str


@dataclass(frozen=True)
class Answer:
    """One slot of the student's notebook answers (grader.judging.answers): what they wrote, read as data
    and made safe to show, and its verdict (``passed``/``failed`` for a cited slot, ``not scored``
    for the free text, ``missing``)."""

    slot: str
    text: str
    verdict: str


@dataclass(frozen=True)
class CauseAt:
    """A first cause as one reader may see it (grader.judging.first_cause): the case that shows it,
    its cause key, its text, and the line of the student's code it names (``file`` "" and ``line``
    0 when it names none)."""

    case: str  # "spec/case"
    cause: str  # the case's cause key (a check kind, or a step's own cause)
    text: str  # the cause in one line, as its reader may see it
    file: str
    line: int
    function: str


@dataclass(frozen=True)
class FirstCause:
    """The cause to fix first, as the student sees it (visible cases only; None when no visible
    case failed) and as staff see it (every case)."""

    student: CauseAt | None
    staff: CauseAt | None


@dataclass(frozen=True)
class Report:
    submission: str
    score: float
    max_score: float
    cases: tuple[CaseResult, ...]
    specs: tuple[SpecSummary, ...]
    format: int = REPORT_FORMAT
    problem: str = ""  # a submission-wide problem (import error, missing file), or ""
    output_tail: str = ""
    duration_s: float = 0.0
    grader_version: str = ""
    path: str = ""  # the path graded, as given (two folders named alike differ here); staff record
    flags: tuple[Flag, ...] = ()  # integrity flags, for staff only
    scope: str = "all"  # "all": every spec graded; "public": the visible specs only (a student's run)
    ungraded_points: float = 0.0  # points of the specs a "public" run left to the autograder
    answers: tuple[Answer, ...] = ()  # the notebook answers, slot by slot (staff and the student)
    first_cause: FirstCause | None = None  # the cause to fix first (grader.judging.first_cause)

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0


# Field names of each result type, in declaration order and sorted (report.json's key order).
_FIELDS: dict[type, tuple[str, ...]] = {}
_SORTED_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(cls.__dataclass_fields__)
        _SORTED_FIELDS[cls] = tuple(sorted(names))
    return names


def _plain(value: Any) -> Any:
    """What :func:`dataclasses.asdict` makes of a result, without its deep copies (the leaves are
    immutable: str, int, float, bool, None), which cost more than the rest of report writing."""
    if hasattr(type(value), "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in _field_names(type(value))}
    if type(value) is tuple or type(value) is list:
        return type(value)(_plain(v) for v in value)
    if isinstance(value, (str, int, float, type(None))):
        return value
    if isinstance(value, dict):
        return type(value)((_plain(k), _plain(v)) for k, v in value.items())
    return copy.deepcopy(value)


def report_to_json(report: Report, *, timing: bool = True) -> dict[str, Any]:
    """The JSON form of a report; ``timing=False`` drops wall-clock fields."""
    data = _plain(report)
    if not timing:
        data.pop("duration_s", None)
        for case in data["cases"]:
            case.pop("duration_s", None)
    return data


_encode_text = json.encoder.encode_basestring_ascii  # what json.dumps uses (ensure_ascii), in C


def _float_text(x: float) -> str:
    if x != x:
        return "NaN"
    if x == math.inf:
        return "Infinity"
    if x == -math.inf:
        return "-Infinity"
    return float.__repr__(x)


def _scalar_text(value: Any) -> str | None:
    """A leaf's JSON text as json.dumps writes it; None for a container."""
    kind = type(value)
    if kind is str:
        return _encode_text(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return _float_text(value)
    return None


# (type, indent) -> for each sorted field: (its name, the text before its value)
_FIELD_PREFIXES: dict[tuple[type, str], tuple[tuple[str, str], ...]] = {}


def _write_json(value: Any, indent: str, out: list) -> None:
    """Append ``value`` to ``out`` exactly as ``json.dumps(report_to_json(...), indent=1,
    sort_keys=True)`` writes it, reading the result types directly (no intermediate dicts)."""
    text = _scalar_text(value)
    if text is not None:
        out.append(text)
        return
    kind = type(value)
    inner = indent + " "
    if kind is tuple or kind is list:
        if not value:
            out.append("[]")
            return
        separator = "[\n" + inner
        for item in value:
            out.append(separator)
            separator = ",\n" + inner
            text = _scalar_text(item)
            if text is None:
                _write_json(item, inner, out)
            else:
                out.append(text)
        out.append("\n" + indent + "]")
    elif hasattr(kind, "__dataclass_fields__"):
        prefixes = _FIELD_PREFIXES.get((kind, indent))
        if prefixes is None:
            _field_names(kind)
            names = _SORTED_FIELDS[kind]
            prefixes = _FIELD_PREFIXES[(kind, indent)] = tuple(
                (name, ("{\n" if i == 0 else ",\n") + inner + _encode_text(name) + ": ") for i, name in enumerate(names)
            )
        if not prefixes:
            out.append("{}")
            return
        for name, prefix in prefixes:
            out.append(prefix)
            item = getattr(value, name)
            text = _scalar_text(item)
            if text is None:
                _write_json(item, inner, out)
            else:
                out.append(text)
        out.append("\n" + indent + "}")
    else:
        raise TypeError(f"not a result value: {kind.__name__}")


def report_json_text(report: Report) -> str:
    """report.json's text: ``json.dumps(report_to_json(report), indent=1, sort_keys=True)``
    plus a newline, byte for byte, written several times faster (a class writes thousands)."""
    out: list[str] = []
    try:
        _write_json(report, "", out)
    except TypeError:  # a value of a type the results never hold: the general encoder says what
        return json.dumps(report_to_json(report), indent=1, sort_keys=True) + "\n"
    out.append("\n")
    return "".join(out)


def write_report(report: Report, path) -> None:
    from pathlib import Path

    from grader.judging.report_schema import check_report_text

    text = report_json_text(report)
    check_report_text(text, str(path))  # against docs/report.schema.json while the tests run
    Path(path).write_text(text, encoding="utf-8")


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
