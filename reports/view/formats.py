"""Numbers as reports write them: points, percentages, durations and 1-based step numbers."""

from __future__ import annotations

import math


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
