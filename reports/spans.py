"""Copied spans made fit to draw: ordered, clipped to the source, sorted and merged.

copydetect reports spans as ``(start, end)`` character offsets into a source, and may give
one that ends before it starts, one past the end of the text, or several that overlap. Drawn
as given, a pane repeats part of the file and loses its highlights; normalised first, each
file is shown once with every reported character highlighted.
"""

from __future__ import annotations

from collections.abc import Iterable


def normalise_spans(spans: Iterable[tuple[int, int]], length: int) -> tuple[tuple[int, int], ...]:
    """Disjoint ``(start, end)`` spans, ``0 <= start < end <= length``, in order, covering exactly
    the characters some span covers: a backwards span is read with its ends swapped, a span
    is clipped to the text, empty spans go, and overlapping or touching spans become one."""
    clipped = sorted((max(0, min(a, b)), min(length, max(a, b))) for a, b in ((int(s), int(e)) for s, e in spans))
    merged: list[list[int]] = []
    for start, end in clipped:
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((s, e) for s, e in merged)
