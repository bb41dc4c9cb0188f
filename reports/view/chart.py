"""The launch picture's geometry: expected against observed launches per step, as SVG
coordinates (the template draws them)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.judging.results import LaunchPoint

from .formats import step_no
from .text import one_line


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


def nice_top(m: int) -> tuple[int, int]:
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
    top_value, tick_step = nice_top(max(values) if values else 1)
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
