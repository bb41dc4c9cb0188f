"""Pure helpers shared by the renderers: safe text, number formats, tag order,
and the student-facing view of a :class:`grader.results.Report`.

Everything here is a pure function of typed report objects. The one rule that
matters most lives here too: to a student a ``redacted`` (hidden) case is one
bit, passed or not passed with one fixed message, whatever other fields it
carries (the report is the staff's full record; staff views ask for it all).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from grader.results import CaseResult, CheckLine, LaunchPoint, Report, SpecSummary, StepLine

# ---------------------------------------------------------------------------
# Behaviour tags (fixed vocabulary, in this order): one list, in grader/spec_model.py
from grader.spec_model import CORE_TAGS, TAGS  # noqa: E402


STRETCH_TAGS: tuple[str, ...] = tuple(t for t in TAGS if t not in CORE_TAGS)

TAG_LABELS: dict[str, str] = {
    "launch-counter": "Launch counter",
    "eager": "Eager runs",
    "shape-cache": "Shape-keyed graph cache",
    "static-buffer": "Static input buffer",
    "single-launch-replay": "One launch per replay",
    "piecewise": "Piecewise capture",
    "padding": "Batch padding",
    "warmup": "Warm-up calls",
    "fusion": "Elementwise fusion",
    "state-machine": "Decode-step state machine",
}


def tag_label(tag: str) -> str:
    return TAG_LABELS.get(tag, tag)


def tag_group(tag: str) -> str:
    """``core``, ``stretch`` or ``other`` (a tag outside the fixed vocabulary)."""
    if tag in CORE_TAGS:
        return "core"
    if tag in STRETCH_TAGS:
        return "stretch"
    return "other"


def tag_sort_key(tag: str) -> tuple[int, str]:
    return (TAGS.index(tag), "") if tag in TAGS else (len(TAGS), tag)


STATUS_LABELS: dict[str, str] = {
    "passed": "Passed",
    "failed": "Failed",
    "error": "Error",
    "timeout": "Timed out",
    "crashed": "Crashed",
    "skipped": "Skipped",
}

STATUS_ICONS: dict[str, str] = {
    "passed": "\u2713",  # check mark
    "failed": "\u2717",  # ballot x
    "error": "!",
    "timeout": "\u231b",  # hourglass
    "crashed": "\u26a1",  # high voltage
    "skipped": "\u2013",  # en dash
}

# ---------------------------------------------------------------------------
# Safe text

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]")


def _replace_bad(match: re.Match) -> str:
    ch = match.group(0)
    code = ord(ch)
    if code <= 0x9F:
        return f"\\x{code:02x}"  # shown the way Python writes it, e.g. NUL -> \x00
    return "\ufffd"


def clean_text(text: str) -> str:
    """Text that is safe to put into HTML, XML 1.0, JSON and CSV as UTF-8.

    Drops ANSI colour sequences, normalises newlines, and shows other control
    characters the way Python escapes them (a NUL in a student's output reads
    ``\\x00``: seen, not lost, in any font). Escaping for the target format
    is left to its own writer (Jinja autoescape, ElementTree, json, csv).
    """
    if not isinstance(text, str):
        text = str(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    text = _BAD.sub(_replace_bad, text)
    # Beyond the BMP: non-characters U+xFFFE/U+xFFFF of every plane.
    if _ASTRAL.search(text):  # a regex, not a Python loop over every character: reports render text a lot
        text = "".join("\ufffd" if (ord(c) & 0xFFFE) == 0xFFFE else c for c in text)
    return text


def one_line(text: str, limit: int = 0) -> str:
    text = " ".join(clean_text(text).split())
    if limit and len(text) > limit:
        text = text[: max(1, limit - 1)].rstrip() + "\u2026"
    return text


def slug(text: str) -> str:
    norm = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9_-]+", "-", norm).strip("-").lower() or "x"


# ---------------------------------------------------------------------------
# Numbers


def fmt_points(x: float) -> str:
    """``7``, ``7.5``, ``7.25``: at most two decimals, no trailing zeros."""
    if x is None or not math.isfinite(x):
        return "0"
    text = f"{round(float(x), 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fmt_percent(x: float) -> str:
    if not math.isfinite(x):
        return "0%"
    r = round(x, 1)
    return (f"{r:.0f}" if r == int(r) else f"{r:.1f}") + "%"


def percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def fmt_seconds(s: float) -> str:
    if not s or not math.isfinite(s) or s < 0:
        return ""
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 60:
        return f"{s:.1f} s"
    return f"{int(s // 60)} min {int(s % 60)} s"


def step_no(index: int | None) -> str:
    """Steps are stored 0-based (an index into ``CaseResult.steps``); students read them 1-based."""
    return "" if index is None else str(index + 1)


# ---------------------------------------------------------------------------
# Student-facing case view


@dataclass(frozen=True)
class CaseView:
    """What a student-facing renderer may show of one case."""

    spec: str
    label: str  # the case id, or "Hidden case N" for a redacted case
    status: str
    score: float
    max_score: float
    message: str
    redacted: bool
    visibility: str
    description: str = ""
    steps: tuple[StepLine, ...] = ()
    checks: tuple[CheckLine, ...] = ()
    launches: tuple[LaunchPoint, ...] = ()
    output_tail: str = ""
    duration_s: float = 0.0
    tag: str = ""
    hidden: bool = False  # a hidden case shown in full (staff views only)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failed_checks(self) -> tuple[CheckLine, ...]:
        return tuple(c for c in self.checks if not c.passed)

    @property
    def passed_checks(self) -> tuple[CheckLine, ...]:
        return tuple(c for c in self.checks if c.passed)

    @property
    def first_bad_step(self) -> int | None:
        steps = [c.step for c in self.checks if not c.passed and c.step is not None]
        return min(steps) if steps else None


# The one bit a student sees of a hidden case: the same text for every way of not passing
# (a wrong value, NotImplementedError, a missing name, a crash, a timeout), and no timing.
HIDDEN_PASSED = "Passed."
HIDDEN_NOT_PASSED = (
    "Not passed. This case is hidden: only whether it passed is shown. "
    "Its spec's explanation and hint say what it checks."
)


def one_bit(c: CaseResult, number: int) -> CaseView:
    """A hidden case as a student sees it: passed or not, one fixed message, nothing else."""
    passed = c.status == "passed"
    return CaseView(
        spec=c.spec,
        label=f"Hidden case {number}",
        status="passed" if passed else "failed",
        score=c.score if passed else 0.0,
        max_score=c.max_score,
        message=HIDDEN_PASSED if passed else HIDDEN_NOT_PASSED,
        redacted=True,
        visibility=c.visibility,
        tag=c.tag,
    )


def full_view(c: CaseResult, label: str | None = None) -> CaseView:
    """Every detail of a case (a visible case for its student; any case for staff)."""
    return CaseView(
        spec=c.spec,
        label=label or c.case,
        status=c.status,
        score=c.score,
        max_score=c.max_score,
        message=clean_text(c.message),
        redacted=False,
        visibility=c.visibility,
        description=clean_text(c.description),
        steps=c.steps,
        checks=c.checks,
        launches=c.launches,
        output_tail=clean_text(c.output_tail),
        duration_s=c.duration_s,
        tag=c.tag,
        hidden=c.redacted,
    )


def case_views(report: Report, staff: bool = False) -> tuple[CaseView, ...]:
    """Every case of the report as a student may see it (hidden ones as one bit), or, with
    ``staff=True``, every case in full (hidden ones marked ``hidden``)."""
    hidden_no: dict[str, int] = {}
    out = []
    for c in report.cases:
        if c.redacted:
            hidden_no[c.spec] = hidden_no.get(c.spec, 0) + 1
            out.append(full_view(c) if staff else one_bit(c, hidden_no[c.spec]))
        else:
            out.append(full_view(c))
    return tuple(out)


def student_duration(report: Report) -> float:
    """Grading time a student may see: 0 when any hidden case ran (its timing is the
    submission's to choose, so it could signal what the case was given)."""
    return 0.0 if any(c.redacted for c in report.cases) else report.duration_s


# ---------------------------------------------------------------------------
# Specs and tags of one report


@dataclass(frozen=True)
class SpecView:
    spec: SpecSummary
    anchor: str
    cases: tuple[CaseView, ...]

    @property
    def n_passed(self) -> int:
        return sum(1 for c in self.cases if c.passed)

    @property
    def state(self) -> str:
        """``passed``, ``partial``, ``failed`` or ``notrun``."""
        if not self.cases:
            return "notrun"
        if self.n_passed == len(self.cases):
            return "passed"
        return "partial" if self.n_passed else "failed"

    @property
    def open_cases(self) -> tuple[CaseView, ...]:
        return tuple(c for c in self.cases if not c.passed)


@dataclass(frozen=True)
class TagView:
    tag: str
    label: str
    group: str
    score: float
    max_score: float
    n_specs: int
    n_cases: int = 0
    n_passed: int = 0

    @property
    def percent(self) -> float:
        return percent(self.score, self.max_score)


@dataclass(frozen=True)
class GroupView:
    name: str  # core / stretch / other
    title: str
    tags: tuple[TagView, ...]
    score: float = 0.0
    max_score: float = 0.0


GROUP_TITLES = {"core": "Core lab", "stretch": "Stretch goals", "other": "Other"}


def spec_views(report: Report, staff: bool = False) -> tuple[SpecView, ...]:
    views = case_views(report, staff)
    out = []
    seen_anchors: set[str] = set()
    specs = list(report.specs)
    known = {s.id for s in specs}
    # A case whose spec has no summary still shows, under a plain stand-in (never dropped).
    for c in report.cases:
        if c.spec not in known:
            known.add(c.spec)
            mine = [x for x in report.cases if x.spec == c.spec]
            total = sum(x.max_score for x in mine)
            specs.append(
                SpecSummary(
                    id=c.spec, title=c.spec, tag=c.tag, points=total, visibility="visible",
                    explanation="", hint="", score=sum(x.score for x in mine), max_score=total,
                )
            )
    for i, spec in enumerate(specs):
        anchor = f"spec-{slug(spec.id)}"
        if anchor in seen_anchors:
            anchor = f"{anchor}-{i}"
        seen_anchors.add(anchor)
        out.append(SpecView(spec=spec, anchor=anchor, cases=tuple(v for v in views if v.spec == spec.id)))
    return tuple(out)


def tag_groups(specs: Iterable[SpecSummary], cases: Iterable[CaseResult] = ()) -> tuple[GroupView, ...]:
    """Points per behaviour tag (earned vs possible), grouped core / stretch / other."""
    per_tag: dict[str, list[float]] = {}
    for s in specs:
        row = per_tag.setdefault(s.tag, [0.0, 0.0, 0, 0, 0])
        row[0] += s.score
        row[1] += s.max_score
        row[2] += 1
    for c in cases:
        row = per_tag.setdefault(c.tag, [0.0, 0.0, 0, 0, 0])
        row[3] += 1
        row[4] += 1 if c.status == "passed" else 0
    groups = []
    for name in ("core", "stretch", "other"):
        tags = tuple(
            TagView(tag=t, label=tag_label(t), group=name, score=v[0], max_score=v[1], n_specs=int(v[2]), n_cases=int(v[3]), n_passed=int(v[4]))
            for t, v in sorted(per_tag.items(), key=lambda kv: tag_sort_key(kv[0]))
            if tag_group(t) == name
        )
        if tags:
            groups.append(
                GroupView(
                    name=name,
                    title=GROUP_TITLES[name],
                    tags=tags,
                    score=sum(t.score for t in tags),
                    max_score=sum(t.max_score for t in tags),
                )
            )
    return tuple(groups)


@dataclass(frozen=True)
class Headline:
    mood: str  # all / most / some / none / problem
    title: str
    text: str


def headline(report: Report) -> Headline:
    """A short, kind sentence about where the submission stands."""
    n = len(report.cases)
    ok = sum(1 for c in report.cases if c.status == "passed")
    left = n - ok
    if report.problem:
        return Headline(
            "problem",
            "The grader could not run all of your code",
            "Something stopped the grader before it could try every behaviour. "
            "Fix the problem in the box below first; the rest of this page will fill in once it is gone.",
        )
    if n and left == 0:
        return Headline(
            "all",
            "Every case passes",
            "Your simulation pays one launch per replay and keeps its inputs where the graph expects them. That is the whole trick.",
        )
    if n == 0:
        return Headline("none", "Nothing was graded", "No cases ran for this submission.")
    cases = "case" if left == 1 else "cases"
    if ok == 0:
        return Headline(
            "none",
            f"{left} {cases} to go",
            "A fresh start. Begin with the core behaviours at the top: each section says what the grader expected, "
            "what your code did, and why a real inference engine cares.",
        )
    return Headline(
        "most" if ok >= left else "some",
        f"{ok} of {n} cases pass, {left} to go",
        "Each section below shows what the grader expected next to what your code did, with a hint on where to look.",
    )


# ---------------------------------------------------------------------------
# Launch picture geometry (expected vs observed launches per step)


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    w: float
    h: float
    value: int | None
    kind: str  # expected / ok / bad / missing


@dataclass(frozen=True)
class LaunchGroup:
    label: str
    full_label: str
    step: str
    cx: float
    expected: Bar
    observed: Bar
    match: bool


@dataclass(frozen=True)
class Tick:
    y: float
    value: int


@dataclass(frozen=True)
class LaunchChart:
    width: float
    height: float
    left: float
    right: float
    top: float
    base: float
    groups: tuple[LaunchGroup, ...]
    ticks: tuple[Tick, ...]
    n_mismatch: int
    summary: str


def _nice_top(m: int) -> tuple[int, int]:
    """An axis top at or above ``m`` and a tick step giving 2-5 ticks."""
    m = max(1, m)
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000):
        top = -(-m // step) * step
        if top // step <= 5:
            return top, step
    step = 10 ** len(str(m))
    return -(-m // step) * step, step


def launch_chart(points: tuple[LaunchPoint, ...]) -> LaunchChart | None:
    if not points:
        return None
    points = points[:40]
    values = [v for p in points for v in (p.expected, p.observed) if v is not None and v >= 0]
    top_value, tick_step = _nice_top(max(values) if values else 1)
    slot = 78.0
    left, right, top, plot_h = 34.0, 10.0, 18.0, 120.0
    base = top + plot_h
    width = left + right + slot * len(points)
    height = base + 40.0
    bw = 24.0

    def bar(x: float, v: int | None, kind: str) -> Bar:
        if v is None:
            return Bar(x, base, bw, 0.0, None, "missing")
        vv = max(0, v)
        h = plot_h * min(vv, top_value) / top_value
        if vv > 0:
            h = max(h, 2.0)
        return Bar(x, base - h, bw, h, v, kind)

    groups = []
    mismatches = 0
    for i, p in enumerate(points):
        cx = left + slot * i + slot / 2
        match = p.expected is None or p.expected == p.observed
        if not match:
            mismatches += 1
        groups.append(
            LaunchGroup(
                label=one_line(p.label, 11) or f"step {step_no(p.step)}",
                full_label=one_line(p.label) or f"step {step_no(p.step)}",
                step=step_no(p.step),
                cx=cx,
                expected=bar(cx - bw - 1, p.expected, "expected"),
                observed=bar(cx + 1, p.observed, "ok" if match else "bad"),
                match=match,
            )
        )
    ticks = tuple(Tick(base - plot_h * v / top_value, v) for v in range(0, top_value + 1, tick_step))
    if all(p.expected is None for p in points):
        summary = "This case expects no particular launch counts; the bars show your code's launches."
    elif mismatches == 0:
        summary = "Launches match at every step."
    elif mismatches == 1:
        summary = "Launches differ at 1 step (highlighted)."
    else:
        summary = f"Launches differ at {mismatches} steps (highlighted)."
    return LaunchChart(
        width=width,
        height=height,
        left=left,
        right=right,
        top=top,
        base=base,
        groups=tuple(groups),
        ticks=ticks,
        n_mismatch=mismatches,
        summary=summary,
    )


# ---------------------------------------------------------------------------
# Plain-text rendering of one case (Gradescope, JUnit)


def case_text(view: CaseView, hint: str = "") -> str:
    """The feedback of one case as plain text; a redacted case gives its message only."""
    if view.redacted:
        return view.message
    parts: list[str] = []
    if view.passed:
        return view.message or "Passed."
    if view.description:
        parts.append(view.description)
    if view.message:
        parts.append(view.message)
    if view.steps:
        lines = ["Steps:"]
        for s in view.steps:
            lines.append(f"  {step_no(s.index)}. {one_line(s.action)}  ->  {one_line(s.outcome)}")
        parts.append("\n".join(lines))
    if view.checks:
        lines = ["Checks:"]
        for c in view.checks:
            where = f"step {step_no(c.step)}: " if c.step is not None else ""
            mark = "ok  " if c.passed else "FAIL"
            lines.append(f"  [{mark}] {where}{one_line(c.what)}")
            if not c.passed:
                lines.append(f"         expected: {clean_text(c.expected)}")
                lines.append(f"         observed: {clean_text(c.observed)}")
        parts.append("\n".join(lines))
    if view.launches:
        cells = []
        for p in view.launches:
            e = "-" if p.expected is None else str(p.expected)
            o = "-" if p.observed is None else str(p.observed)
            cells.append(f"{one_line(p.label) or 'step ' + step_no(p.step)} {e}/{o}")
        parts.append("Launches per step (expected/observed): " + ", ".join(cells))
    if hint:
        parts.append("Hint: " + clean_text(hint))
    if view.output_tail.strip():
        parts.append("Output (last lines):\n" + view.output_tail.rstrip())
    return "\n\n".join(parts)


def spec_titles(report: Report) -> dict[str, SpecSummary]:
    return {s.id: s for s in report.specs}



# ---------------------------------------------------------------------------
# Causes: one message per cause, whatever step numbers and counts it names

_STEP_PREFIX = re.compile(r"^Step \d+ \((?P<label>.*?)\): (?P<rest>.*)$", re.S)
_CONSEQUENCE = re.compile(r"\s*(?:Steps? [\d\u2013, ]+ needs? its result and did not run[^.]*\.|\d+ checks? of this step could not be made\.)")
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _callee(label: str) -> str:
    label = re.sub(r"^\w+ = ", "", label)
    return re.sub(r"\(.*", "(\u2026)", label, flags=re.S)


@lru_cache(maxsize=8192)  # a class repeats the same few messages hundreds of times
def failure_cause(message: str) -> str:
    """A failure message with what varies per case taken out (step numbers and arguments,
    counts, values), so that one cause is one row however many cases it stops."""
    text = one_line(message)
    m = _STEP_PREFIX.match(text)
    if m:
        text = f"{_callee(m.group('label'))}: {m.group('rest')}"
    text = _CONSEQUENCE.sub("", text)
    return _NUMBER.sub("#", text).strip()


@dataclass(frozen=True)
class FixFirst:
    """The one thing a student should fix first: the cause that stops the most visible cases."""

    cause: str
    message: str  # the first case's own message, as an example
    n_cases: int
    n_specs: int
    anchor: str
    spec_title: str
    case_label: str


def fix_first(specs: tuple[SpecView, ...]) -> FixFirst | None:
    """The most common cause among cases shown in full (a hidden case's cause is never used),
    the earliest spec winning ties: the first failure of a half-done lab is usually the part
    not written yet, and fixing it clears every case it stops."""
    groups: dict[str, list[tuple[SpecView, CaseView]]] = {}
    for s in specs:
        for c in s.open_cases:
            if not c.redacted and c.message:
                groups.setdefault(failure_cause(c.message), []).append((s, c))
    if not groups:
        return None
    cause, hits = max(groups.items(), key=lambda kv: (len(kv[1]), -specs.index(kv[1][0][0])))
    spec, case = hits[0]
    return FixFirst(
        cause=cause,
        message=case.message,
        n_cases=len(hits),
        n_specs=len({id(s) for s, _ in hits}),
        anchor=f"{spec.anchor}-{slug(case.label)}",
        spec_title=spec.spec.title,
        case_label=case.label,
    )


# ---------------------------------------------------------------------------
# Notation: every short form a report uses, explained where it appears

_NOTATIONS = (
    (re.compile(r"is_capturable=[CE]+"), "is_capturable=CEC: one letter per op, in order: C the op may be captured into a graph, E it runs eagerly (attention, for example)."),
    (re.compile(r"\w+\[[\d, ]*\] seed \d+"), "float32[4, 8] seed 1: an input array of that dtype and shape, filled with standard normal values from random seed 1."),
    (re.compile(r"\w+\[[\d, ]*\] \(literal\)"), "(literal): an input array whose values the spec lists."),
    (re.compile(r"\b(?:add|mul|matmul|attention)\(-?[\d.]+\)"), "add(1.5), mul(2), matmul(3), attention(5): the grader's ops (x + 1.5, x \u00d7 2, x times a fixed matrix made from seed 3, attention with seed 5); relu, tanh, sigmoid, exp and softmax are the usual functions."),
    (re.compile(r"\u2026"), "\u2026: a value cut short; only its first items are shown."),
)


def notation_notes(texts: Iterable[str]) -> tuple[str, ...]:
    """The explanations of the notations that appear in ``texts`` (in a fixed order)."""
    joined = "\n".join(texts)
    return tuple(note for pattern, note in _NOTATIONS if pattern.search(joined))


def case_notes(view: CaseView) -> tuple[str, ...]:
    """The notations one case's steps and checks use, explained."""
    return notation_notes([view.message, *(s.action for s in view.steps), *(s.outcome for s in view.steps), *(c.what for c in view.checks), *(c.expected for c in view.checks), *(c.observed for c in view.checks)])
