"""Make text a submission controls safe, once, where it enters the grader.

Everything a worker sends back is a claim written by the submission: exception
messages, strings it returned, the file and line of an import error, what it
printed. Before any of it is stored, judged, printed on the grader's terminal or
rendered (HTML, CSV, JUnit, JSON, Gradescope), it goes through :func:`safe_text`,
called from the two places submission text enters the grader: the frame
decoders (:mod:`grader.observations`, and :mod:`grader.framing` for control frames, which
carry the import-error message) and the output log reader (:mod:`grader.run.runner`).
Nothing downstream needs to know.

What it does, and why:

* lone surrogates (which JSON can carry as ``\\ud800``) become U+FFFD: they
  cannot be encoded as UTF-8, so printing or writing them raises mid-batch;
* terminal escape sequences (CSI ``ESC [ ...``, OSC ``ESC ] ... BEL`` such as
  OSC 52, which writes the clipboard) are removed whole, then every other C0 and
  C1 control but newline and tab (a carriage return could overwrite a terminal
  line; ``\\r\\n`` and a lone ``\\r`` become ``\\n``);
* bidirectional controls (U+202A-202E, U+2066-2069, U+200E/F, U+061C), zero-width
  characters (U+200B-200D, U+2060), the BOM (U+FEFF), every other invisible
  format character (Unicode category Cf) and the line and paragraph separators
  become U+FFFD, visible and inert: they could reorder or hide what staff read
  ("Trojan Source") or split a line where a JSON or JavaScript reader would not.
"""

from __future__ import annotations

import re
import unicodedata

REPLACEMENT = "\ufffd"
# ESC followed by a CSI (ESC [ params final), an OSC/DCS/SOS/PM/APC string (ended by BEL or
# ESC \, or by the end of the text), or any single character.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b.?",
    re.DOTALL,
)
_NEUTRALISED = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"  # bidi controls
    "\u200b\u200c\u200d\u2060\ufeff"  # zero-width characters, BOM
    "\u2028\u2029"  # line and paragraph separators
)


def _safe_char(ch: str) -> str:
    if ch in "\n\t":
        return ch
    if ch in _NEUTRALISED:
        return REPLACEMENT
    category = unicodedata.category(ch)
    if category == "Cc":  # C0 and C1 controls (and DEL)
        return ""
    if category in ("Cs", "Cf"):  # lone surrogates; invisible format characters
        return REPLACEMENT
    return ch


def safe_text(text: str) -> str:
    """``text`` with nothing that can encode badly, drive a terminal, or hide and reorder what is shown."""
    if not isinstance(text, str):
        text = str(text)
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to do
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ESCAPE_SEQUENCE.sub("", text)
    return "".join(ch if ch.isprintable() and ch.isascii() else _safe_char(ch) for ch in text)


def one_line(text: str) -> str:
    """``safe_text`` on one terminal line: newlines and tabs become spaces (a submission's
    message must never start a line of its own, such as a forged ``someone: 100/100``)."""
    return " ".join(safe_text(text).split())


_PLAIN = re.compile(r"[\x20-\x7e\n\t]*")  # printable ASCII, newlines and tabs: nothing to name
_SUSPECT = re.compile(r"[^\x20-\x7e]")  # any other character: is_invisible decides


def _named(ch: str) -> str:
    return f"<U+{ord(ch):04X}>"


def is_invisible(ch: str, keep: str = "\n\t") -> bool:
    """``ch`` would hide, reorder or split what a reader sees: a control character (but those in
    ``keep``), an invisible format character (bidi controls, zero-width characters, the BOM:
    category Cf), a line or paragraph separator, or a lone surrogate."""
    return ch not in keep and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def _plain(text: str, keep: str) -> bool:
    return _PLAIN.fullmatch(text) is not None and (
        keep == "\n\t" or not any(c in text for c in "\n\t" if c not in keep)
    )


def visible(text: str, keep: str = "\n\t") -> str:
    """``text`` with every character :func:`is_invisible` written as its code point, e.g.
    ``<U+202E>``: staff see that it is there and which it is ("Trojan Source"), and it acts on
    nothing around it. ``keep=""`` for a name: then no newline or tab can split the line it is on."""
    if _plain(text, keep):
        return text
    # only a character outside printable ASCII can be invisible: those are looked at one by one,
    # the rest is copied as it is (in C, not a character at a time)
    return _SUSPECT.sub(lambda m: _named(m.group()) if is_invisible(m.group(), keep) else m.group(), text)


def count_invisible(text: str, keep: str = "\n\t") -> int:
    """How many characters :func:`visible` writes as a code point (for a page's warning)."""
    if _plain(text, keep):
        return 0
    return sum(1 for ch in _SUSPECT.findall(text) if is_invisible(ch, keep))
