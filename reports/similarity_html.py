"""The staff's similarity pages: ``similarity.html`` (pairs side by side, shared code marked)
and the rows of summary.html's "look at these pairs" block.

Pure: typed pairs in, HTML out, with the reports' Jinja environment (autoescape
forced on) and their shared stylesheet (``templates/_style.css.j2``). Self-contained: inline
CSS, no script, no external URL. Student code is shown as text, never as markup; a bidi
control, zero-width or control character in it is shown as its code point (``<U+202E>``),
with a warning above that side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grader.safetext import count_invisible

from .html import environment, safe_href
from .spans import normalise_spans
from .style import with_style


@dataclass(frozen=True)
class Segment:
    text: str
    shared: bool


@dataclass(frozen=True)
class PairRow:
    """One line of "look at these pairs" on summary.html."""

    a: str
    b: str
    score: float
    a_href: str
    b_href: str
    detail_href: str


@dataclass(frozen=True)
class SimilarBlock:
    rows: tuple[PairRow, ...]
    total: int  # pairs at or above the threshold, shown or not


def segments(code: str, spans: Sequence[tuple[int, int]]) -> tuple[Segment, ...]:
    """``code`` cut into runs, each shared with the other submission or not: every character
    once, in order, with the spans normalised first (:func:`reports.spans.normalise_spans`)."""
    out: list[Segment] = []
    pos = 0
    for start, end in normalise_spans(spans, len(code)):
        if start > pos:
            out.append(Segment(code[pos:start], False))
        out.append(Segment(code[start:end], True))
        pos = end
    if pos < len(code):
        out.append(Segment(code[pos:], False))
    return tuple(out)


def render_similarity(details, n_submissions: int, threshold: float, total: int) -> str:
    """``details``: grader.commands.similarity.PairDetail, highest score first."""
    pairs = [
        {
            "index": i,
            "pair": d.pair,
            "sides": [  # text cleaned, invisible characters named (<U+202E>) and escaped by the environment
                {"name": name, "segments": segments(code, spans), "invisible": count_invisible(code)}
                for name, code, spans in ((d.pair.a, d.a_code, d.a_spans), (d.pair.b, d.b_code, d.b_spans))
            ],
        }
        for i, d in enumerate(details, start=1)
    ]
    page = environment().get_template("similarity.html.j2")
    return with_style(page.render(pairs=pairs, n=n_submissions, threshold=threshold, total=total))


def summary_rows(pairs, links: dict[str, str], total: int) -> SimilarBlock:
    """``links``: submission name -> its report.html, relative to OUT."""
    return SimilarBlock(
        tuple(
            PairRow(
                p.a,
                p.b,
                p.score,
                safe_href(links.get(p.a, "")),
                safe_href(links.get(p.b, "")),
                f"similarity.html#pair-{i}",
            )
            for i, p in enumerate(pairs, start=1)
        ),
        total,
    )
