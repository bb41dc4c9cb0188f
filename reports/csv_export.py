"""Class grades as CSV: one row per submission, one column per spec."""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Sequence

from grader.judging.results import Report

from .view import clean_text, fmt_points

# A spreadsheet treats a cell starting with one of these as a formula.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


# What a spreadsheet may skip before a formula's first character, or a reader never sees:
# format characters (U+FEFF, U+200B, U+2060, bidi marks), spaces, separators and controls.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Zs", "Zl", "Zp", "Mn", "Me"})


def _visible_start(text: str) -> str:
    """``text`` from its first character that is neither invisible nor a space."""
    for i, ch in enumerate(text):
        if ch not in _FORMULA_START and (ch.isspace() or unicodedata.category(ch) in _INVISIBLE_CATEGORIES):
            continue
        return text[i:]
    return ""


def safe_cell(text: str) -> str:
    """Text a spreadsheet will show, not evaluate: a leading ``'`` disarms ``= + - @`` (and tab,
    CR), also when invisible or space characters (a BOM, U+200B, U+2060, ...) come before it."""
    text = clean_text(text).replace("\n", " ")
    if _visible_start(text).startswith(_FORMULA_START):
        return "'" + text
    return text


def spec_columns(reports: Sequence[Report]) -> list[str]:
    """Spec ids in the spec order of the first report, then any others in order of appearance."""
    cols: list[str] = []
    seen: set[str] = set()
    for r in reports:
        for s in r.specs:
            if s.id not in seen:
                seen.add(s.id)
                cols.append(s.id)
    return cols


def grades_rows(reports: Sequence[Report], paths: Sequence[str] | None = None) -> list[list[str]]:
    """The header row and one row per submission, as the CSV holds them. ``path`` is where the
    submission was graded from (two folders both named ``lab`` differ there)."""
    cols = spec_columns(reports)
    paths = list(paths) if paths is not None else [""] * len(reports)
    rows = [["submission", "path", *(safe_cell(c) for c in cols), "total", "max"]]
    for r, path in zip(reports, paths):
        earned = {s.id: s.score for s in r.specs}
        rows.append(
            [
                safe_cell(r.submission),
                safe_cell(path),
                *(fmt_points(earned[c]) if c in earned else "" for c in cols),
                fmt_points(r.score),
                fmt_points(r.max_score),
            ]
        )
    return rows


def grades_csv(reports: Sequence[Report], paths: Sequence[str] | None = None) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerows(grades_rows(reports, paths))
    return buf.getvalue()


ANSWER_COLUMNS = ["submission", "slot", "cited lines", "verdict", "free text"]


def answers_csv(reports: Sequence[Report]) -> str:
    """``answers.csv``: one row per submission and notebook-answer slot, so that a TA reads a
    whole class's answers (the ``two-graphs`` free text above all) in one place. A cited slot's
    text goes under ``cited lines``, the free text under ``free text``; every cell is made safe
    for a spreadsheet (:func:`safe_cell`) and from clean text (:func:`reports.view.clean_text`)."""
    from reports.view import clean_text

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(ANSWER_COLUMNS)
    for r in reports:
        for a in r.answers:
            text = safe_cell(clean_text(a.text).replace("\n", " "))
            free = a.slot == "two-graphs"
            writer.writerow([safe_cell(r.submission), a.slot, "" if free else text, a.verdict, text if free else ""])
    return buf.getvalue()
