"""Safe text: what every renderer does to a string before writing it (HTML, XML, JSON, CSV, a terminal)."""

from __future__ import annotations

import re
import unicodedata

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]")
# Any character one of the steps of clean_text would change: \r (newlines), ESC (ANSI sequences),
# the _BAD characters and everything beyond the BMP. Text without one (nearly all of a report)
# is returned as it is after a single search instead of five passes.
_ANY_CHANGE = re.compile(
    "[\r\x1b\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff\U00010000-\U0010ffff]"
)


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
    if _ANY_CHANGE.search(text) is None:
        return text
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
