"""HTML reports: one page per submission and one class summary page.

Pages are rendered from typed :class:`grader.judging.results.Report` objects with
Jinja templates (``reports/templates/*.j2``). Every template is autoescaped
(forced on, not chosen by file extension) and undefined names raise
(``StrictUndefined``). Pages are self-contained: CSS inline, pictures as
inline SVG, no scripts, no external URLs; they read well on a phone, on a
laptop at night (dark colour scheme) and on paper.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
from markupsafe import Markup

from grader.judging.results import Report
from grader.lab import active as active_lab
from grader.safetext import visible

from . import style
from . import view as v
from .review import needs_review

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"


def _finalize(value: Any) -> Any:
    """Every ``{{ … }}`` passes through here before it is escaped: make text safe for HTML."""
    if isinstance(value, Markup):
        return value
    if isinstance(value, str):  # and what would hide or reorder text shown by its code point, e.g. <U+202E>
        return visible(v.clean_text(value))
    if value is None:
        return ""
    return value


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The one Jinja environment of the HTML reports (autoescape forced on, StrictUndefined)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.filters.update(
        points=v.fmt_points,
        pct=v.fmt_percent,
        seconds=v.fmt_seconds,
        stepno=v.step_no,
        oneline=v.one_line,
        observed=v.observed_text,
        taglabel=v.tag_label,
        taggroup=v.tag_group,
        slug=v.slug,
    )
    env.globals.update(
        STATUS_LABELS=v.STATUS_LABELS,
        STATUS_ICONS=v.STATUS_ICONS,
        percent=v.percent,
        launch_chart=v.launch_chart,
        case_notes=v.case_notes,
        page_style=lambda: style.MARKER,  # see reports.style.with_style
        lab_title=lambda: active_lab().report_title,  # the lab graded (grader.lab)
    )
    return env


def compile_templates() -> None:
    """Compile the pages' templates now (once per process; forked report writers inherit them)."""
    env = environment()
    # every template the pages extend, import or include too: loaded on first use otherwise,
    # that is once in every writer process and again here for the class summary
    for name in sorted(p.name for p in TEMPLATE_DIR.glob("*.j2")):
        env.get_template(name)


def _require_report(report: Any) -> Report:
    if not isinstance(report, Report):
        raise TypeError(f"expected a grader.judging.results.Report, got {type(report).__name__}")
    return report


# ---------------------------------------------------------------------------
# One submission


def _first_for(report: Report, staff: bool):
    """The report's first cause for this page's reader (grader.judging.first_cause), or None."""
    if report.first_cause is None:
        return None
    return report.first_cause.staff if staff else report.first_cause.student


def render_submission(report: Report, staff: bool = False) -> str:
    """The student's ``report.html`` for one graded submission, or with ``staff=True`` the
    staff's ``staff.html``: every hidden case as a student's visible case is shown.

    Not-passed cases with one cause make one block per spec: the cause's lead case in full
    (steps, expected vs observed, output), the others one line each, every case keeping its
    anchor; "Fix this first" names the cause that stops the most core points, then the most
    points; the notation key is written once, at the end of the page."""
    report = _require_report(report)
    specs = v.spec_views(report, staff)
    causes = v.page_causes(specs)
    n_cases = len(report.cases)
    n_passed = sum(1 for c in report.cases if c.status == "passed")
    return style.with_style(
        environment()
        .get_template("submission.html.j2")
        .render(
            report=report,
            staff=staff,
            submission=v.one_line(report.submission, 200) or "submission",
            problem=v.clean_text(report.problem),
            problem_output=v.clean_text(report.output_tail),
            specs=specs,
            page=causes,
            groups=v.tag_groups(report.specs, report.cases),
            headline=v.headline(report),
            fix=v.fix_first(specs, causes, _first_for(report, staff)),
            notes=v.page_notes(specs, causes),
            duration=report.duration_s if staff else v.student_duration(report),
            n_cases=n_cases,
            n_passed=n_passed,
            n_hidden=sum(1 for c in report.cases if c.redacted),
            ring=_ring(report.percent),
            answers=[replace(a, text=v.clean_text(a.text)) for a in report.answers],
        )
    )


@dataclass(frozen=True)
class Ring:
    circumference: float
    filled: float
    mood: str


def _ring(pct: float) -> Ring:
    r = 52.0
    c = 2 * 3.141592653589793 * r
    pct = max(0.0, min(100.0, pct))
    mood = "high" if pct >= 90 else "mid" if pct >= 50 else "low"
    return Ring(circumference=round(c, 2), filled=round(c * pct / 100.0, 2), mood=mood)


# ---------------------------------------------------------------------------
# The class


@dataclass(frozen=True)
class HistBin:
    label: str
    count: int
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class Histogram:
    width: float
    height: float
    base: float
    left: float
    bins: tuple[HistBin, ...]
    ticks: tuple[v.Tick, ...]


@dataclass(frozen=True)
class FailureGroup:
    message: str
    count: int  # cases
    submissions: int


@dataclass(frozen=True)
class SpecStat:
    id: str
    title: str
    tag: str
    n_submissions: int
    n_full: int
    n_cases: int
    n_cases_passed: int
    mean_score: float
    max_score: float
    failures: tuple[FailureGroup, ...]
    more_failures: int

    @property
    def full_rate(self) -> float:
        return v.percent(self.n_full, self.n_submissions)

    @property
    def case_rate(self) -> float:
        return v.percent(self.n_cases_passed, self.n_cases)


@dataclass(frozen=True)
class CauseRow:
    """One cause of failure across the class: what failed first, how many cases it stopped,
    in which specs, and which submissions (the first few linked)."""

    cause: str
    example: str
    count: int
    specs: tuple[str, ...]
    submissions: tuple[tuple[str, str], ...]  # (name, href) of the first few
    n_submissions: int


@dataclass(frozen=True)
class StudentRow:
    name: str
    href: str  # "" when there is no safe link
    staff_href: str
    path: str
    score: float
    max_score: float
    percent: float
    n_failed: int
    problem: bool


def safe_href(link: str) -> str:
    """A relative link, or "" when the link has a scheme or host (the summary never links out)."""
    if not isinstance(link, str) or not link:
        return ""
    link = v.clean_text(link).strip()
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or link.startswith("//") or "\\" in link:
        return ""
    return link


@lru_cache(maxsize=8192)  # a class repeats the same few messages hundreds of times
def shown(message: str) -> str:
    """A failure message as one line of at most 300 characters."""
    return v.one_line(message, 300)


def _histogram(percents: Sequence[float]) -> Histogram:
    counts = [0] * 10
    for p in percents:
        i = min(9, max(0, int(p // 10)))
        counts[i] += 1
    top, step = v.nice_top(max(counts) if counts else 1)
    left, slot, base, plot_h = 30.0, 48.0, 150.0, 130.0
    bins = []
    for i, n in enumerate(counts):
        h = plot_h * n / top if top else 0.0
        label = f"{i * 10}\u2013{i * 10 + 9}" if i < 9 else "90\u2013100"
        bins.append(HistBin(label=label, count=n, x=left + slot * i + 5, y=base - h, w=slot - 10, h=h))
    ticks = tuple(v.Tick(base - plot_h * t / top, t) for t in range(0, top + 1, step))
    return Histogram(width=left + slot * 10 + 8, height=base + 34, base=base, left=left, bins=tuple(bins), ticks=ticks)


def _spec_stats(reports: Sequence[Report], top_n: int = 5) -> tuple[SpecStat, ...]:
    order: list[str] = []
    meta: dict[str, Any] = {}
    for r in reports:
        for s in r.specs:
            if s.id not in meta:
                order.append(s.id)
                meta[s.id] = s
    # each report's first summary of a spec, and its cases by spec: read once, not once per spec
    firsts = [{s.id: s for s in reversed(r.specs)} for r in reports]
    by_spec: list[dict[str, list]] = []
    for r in reports:
        grouped: dict[str, list] = {}
        for c in r.cases:
            grouped.setdefault(c.spec, []).append(c)
        by_spec.append(grouped)
    stats = []
    for sid in order:
        subs = [(i, r, first[sid]) for i, (r, first) in enumerate(zip(reports, firsts)) if sid in first]
        n_full = sum(1 for _, _, s in subs if s.max_score > 0 and s.score >= s.max_score - 1e-9)
        cases = [(r, c) for i, r, _ in subs for c in by_spec[i].get(sid, ())]
        failing: dict[str, list] = {}
        for r, c in cases:
            if c.status == "passed":
                continue
            msg = shown(c.message) or f"({v.STATUS_LABELS.get(c.status, c.status).lower()}, no message)"
            row = failing.setdefault(msg, [0, set()])
            row[0] += 1
            row[1].add(id(r))
        groups = sorted(
            (FailureGroup(m, n, len(who)) for m, (n, who) in failing.items()),
            key=lambda g: (-g.count, -g.submissions, g.message),
        )
        stats.append(
            SpecStat(
                id=sid,
                title=meta[sid].title,
                tag=meta[sid].tag,
                n_submissions=len(subs),
                n_full=n_full,
                n_cases=len(cases),
                n_cases_passed=sum(1 for _, c in cases if c.status == "passed"),
                mean_score=statistics.fmean([s.score for _, _, s in subs]) if subs else 0.0,
                max_score=meta[sid].max_score,
                failures=tuple(groups[:top_n]),
                more_failures=max(0, len(groups) - top_n),
            )
        )
    return tuple(stats)


def _tag_stats(reports: Sequence[Report]) -> tuple[v.GroupView, ...]:
    specs = [s for r in reports for s in r.specs]
    cases = [c for r in reports for c in r.cases]
    return v.tag_groups(specs, cases)


MAX_NAMES_PER_CAUSE = 12


def _causes(reports: Sequence[Report], hrefs: Sequence[str], hidden: bool) -> tuple[CauseRow, ...]:
    """Failures of visible (or hidden) cases clustered by cause (:func:`reports.view.class_cause`), most cases first."""
    rows: dict[str, dict] = {}
    for r, href in zip(reports, hrefs):
        name = v.one_line(r.submission, 200) or "(unnamed)"
        for c in r.cases:
            if c.status == "passed" or c.redacted != hidden:
                continue
            message = c.message or f"({v.STATUS_LABELS.get(c.status, c.status).lower()}, no message)"
            # the cause from the verdict's records, never read back out of its message
            row = rows.setdefault(v.class_cause(c), {"example": shown(message), "count": 0, "specs": [], "who": {}})
            row["count"] += 1
            if c.spec not in row["specs"]:
                row["specs"].append(c.spec)
            row["who"].setdefault(name, href)
    ordered = sorted(rows.items(), key=lambda kv: (-kv[1]["count"], -len(kv[1]["who"]), kv[0]))
    return tuple(
        CauseRow(
            cause=cause,
            example=row["example"],
            count=row["count"],
            specs=tuple(row["specs"]),
            submissions=tuple(list(row["who"].items())[:MAX_NAMES_PER_CAUSE]),
            n_submissions=len(row["who"]),
        )
        for cause, row in ordered
    )


def render_summary(
    reports: list[Report],
    links: list[str],
    paths: Sequence[str] | None = None,
    staff_links: Sequence[str] | None = None,
    similar_pairs: Any = None,
) -> str:
    """The instructor's ``summary.html``: every student (linked from the top, lowest score
    first, then by name), score histogram, pass rates, failures clustered by cause (visible and
    hidden cases apart). A staff page: hidden cases' messages are shown.

    ``links[i]`` is the relative URL of ``reports[i]``'s ``report.html`` (``staff_links[i]``: of
    its ``staff.html``); a link with a scheme or a host is shown as plain text, never followed.
    ``paths[i]`` is the path the submission was graded from (two folders named alike differ there).
    """
    reports = [_require_report(r) for r in reports]
    links = list(links)
    if len(links) != len(reports):
        raise ValueError(f"{len(reports)} reports but {len(links)} links")
    paths = list(paths) if paths is not None else [""] * len(reports)
    staff_links = list(staff_links) if staff_links is not None else [""] * len(reports)
    percents = [r.percent for r in reports]
    hrefs = [safe_href(link) for link in links]
    staff_hrefs = [safe_href(link) for link in staff_links]
    students = sorted(
        (
            StudentRow(
                name=v.one_line(r.submission, 200) or "(unnamed)",
                href=href,
                staff_href=staff_href,
                path=v.one_line(path, 300),
                score=r.score,
                max_score=r.max_score,
                percent=r.percent,
                n_failed=sum(1 for c in r.cases if c.status != "passed"),
                problem=bool(r.problem),
            )
            for r, href, staff_href, path in zip(reports, hrefs, staff_hrefs, paths)
        ),
        key=lambda s: (s.percent, s.name.lower(), s.name),
    )
    return style.with_style(
        environment()
        .get_template("summary.html.j2")
        .render(
            n=len(reports),
            mean=statistics.fmean(percents) if percents else 0.0,
            median=statistics.median(percents) if percents else 0.0,
            n_full=sum(1 for r in reports if r.max_score > 0 and r.score >= r.max_score - 1e-9),
            n_problem=sum(1 for r in reports if r.problem),
            histogram=_histogram(percents),
            spec_stats=_spec_stats(reports),
            groups=_tag_stats(reports),
            students=students,
            review=needs_review(reports, staff_hrefs if any(staff_hrefs) else hrefs),
            causes=_causes(reports, staff_hrefs if any(staff_hrefs) else hrefs, hidden=False),
            hidden_causes=_causes(reports, staff_hrefs if any(staff_hrefs) else hrefs, hidden=True),
            **(
                {"similar_pairs": similar_pairs} if similar_pairs is not None else {}
            ),  # staff only: grader/commands/similarity.py
        )
    )
