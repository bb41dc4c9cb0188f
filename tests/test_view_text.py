"""Unit tests of ``reports.view.text``: the cleaning every renderer applies before writing text
(HTML, XML 1.0, JSON, CSV), the one-line form and the slug."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from reports.view.text import clean_text, one_line, slug


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("NUL\x00 bell\x07 vt\x0b del\x7f c1\x85", "NUL\\x00 bell\\x07 vt\\x0b del\\x7f c1\\x85"),
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("\x1b]0;title\x07after", "after"),
        ("a\r\nb\rc", "a\nb\nc"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ("non\ufffe char\uffff \ufdd0", "non\ufffd char\ufffd \ufffd"),
        ("astral \U0001fffe \U0010ffff ok \U0001f600", "astral \ufffd \ufffd ok \U0001f600"),
        ("tab\tkept\nnewline kept", "tab\tkept\nnewline kept"),
    ],
)
def test_control_characters_are_shown_not_lost(raw, shown):
    """A control character reads the way Python escapes it; what no format can hold becomes U+FFFD."""
    assert clean_text(raw) == shown


def test_clean_text_fits_every_format():
    """Whatever the input, the result encodes as UTF-8 and sits in an XML 1.0 document."""
    everything = "".join(map(chr, range(0x10000))) + "\U0001fffe\U0010ffff"
    out = clean_text(everything)
    out.encode("utf-8")
    el = ET.Element("x")
    el.text = out
    ET.fromstring(ET.tostring(el, encoding="unicode"))


def test_clean_text_takes_anything_printable():
    assert clean_text(3.5) == "3.5"


def test_one_line_folds_whitespace_and_cuts_with_an_ellipsis():
    assert one_line("a\n\n b\tc  ") == "a b c"
    assert one_line("abcdefghij", 5) == "abcd\u2026" and len(one_line("abcdefghij", 5)) == 5
    assert one_line("short", 5) == "short"
    assert one_line("abcdefghij") == "abcdefghij"  # no limit


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Shape-keyed graph cache", "shape-keyed-graph-cache"),
        ("Caf\u00e9 \u00e0 la", "cafe-a-la"),
        ("\u4e2d\u6587", "x"),
    ],
)
def test_slug_is_ascii_and_never_empty(text, expected):
    assert slug(text) == expected
