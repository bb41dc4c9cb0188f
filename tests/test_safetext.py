"""Unit tests of ``grader.safetext``: text a submission controls made safe where it enters the grader.

The module's promises (its docstring): lone surrogates become U+FFFD; terminal escape sequences
are removed whole and every other C0/C1 control but newline and tab goes (CR becomes a newline);
bidi controls, zero-width characters, the BOM, other format characters and the line/paragraph
separators become a visible U+FFFD; everything else (letters, symbols, ideographs) is kept; and
:func:`one_line` never lets a message start a terminal line of its own.
"""

from __future__ import annotations

import sys
import unicodedata

import pytest

from grader.safetext import REPLACEMENT, one_line, safe_text


# ------------------------------------------------------------------ text made safe where it enters
@pytest.mark.parametrize(
    "raw, clean",
    [
        ("plain text, 1 + 1 = 2\n\tindented", "plain text, 1 + 1 = 2\n\tindented"),
        ("caf\u00e9 \u4e2d\u6587 \u2192 ok", "caf\u00e9 \u4e2d\u6587 \u2192 ok"),
        ("cannot import \ud800 here", "cannot import \ufffd here"),
        ("\x1b[2K\r\x1b[1Aforged", "\nforged"),
        ("a\x1b]52;c;aGVsbG8=\x07b", "ab"),
        ("a\x1b]0;title\x1b\\b", "ab"),
        ("a\x9b31mb\x85c\x00d\x7fe", "abcde"),
        ("line\r\nnext\rthird", "line\nnext\nthird"),
        (
            "\u202eevil\u2066 \u2067\u2068\u2069\u202a\u202b\u202c\u202d\u200e\u200f\u061c",
            "\ufffdevil\ufffd " + "\ufffd" * 10,
        ),
        ("zero\u200bwidth\u200c\u200d\u2060\ufeff", "zero\ufffdwidth" + "\ufffd" * 4),
        ("sep\u2028arators\u2029", "sep\ufffdarators\ufffd"),
    ],
)
def test_safe_text(raw, clean):
    assert safe_text(raw) == clean
    assert safe_text(clean) == clean  # idempotent
    safe_text(raw).encode("utf-8")  # always encodable


def test_one_line_never_starts_a_line_of_its_own():
    assert one_line("x\nsomeone-else: 100/100\r\n\x1b[2K") == "x someone-else: 100/100"


# Every character of the BMP, once: what the grader could be sent.
_BMP = "".join(map(chr, range(sys.maxunicode if sys.maxunicode < 0x10000 else 0x10000)))


def test_no_unsafe_character_survives_anywhere_in_the_bmp():
    """Whatever the input, the output holds no control but newline and tab, no format character,
    no surrogate and no line or paragraph separator, and it encodes as UTF-8."""
    out = safe_text(_BMP)
    out.encode("utf-8")
    left = {
        f"U+{ord(ch):04X}"
        for ch in set(out)
        if (unicodedata.category(ch) in ("Cc", "Cf", "Cs") and ch not in "\n\t") or ch in "\u2028\u2029"
    }
    assert not left
    assert safe_text(out) == out  # idempotent on the worst input too


def test_visible_characters_outside_ascii_are_kept_unchanged():
    """Letters, digits, punctuation, symbols and spaces of every script pass through untouched:
    the cleaning hides nothing a student legitimately wrote."""
    visible = "".join(
        ch for ch in _BMP[0x80:] if unicodedata.category(ch)[0] in "LNPS" or unicodedata.category(ch) == "Zs"
    )
    assert len(visible) > 40000
    assert safe_text(visible) == visible


def test_an_unterminated_osc_sequence_is_removed_to_the_end_of_the_text():
    """An OSC string the submission never ends (no BEL, no ST) cannot leak its payload as text."""
    assert safe_text("ok\x1b]52;c;c2VjcmV0") == "ok"


def test_a_lone_escape_at_the_end_is_removed():
    assert safe_text("done\x1b") == "done"


def test_every_format_character_becomes_a_visible_replacement():
    """Not only the listed bidi and zero-width characters: any Cf character (soft hyphen, the
    Arabic number sign, the interlinear annotation marks) shows as U+FFFD."""
    for ch in ("\u00ad", "\u0600", "\ufff9", "\U000e0001"):
        assert unicodedata.category(ch) == "Cf"
        assert safe_text(f"a{ch}b") == f"a{REPLACEMENT}b"


def test_text_that_is_not_a_string_is_made_one():
    assert safe_text(42) == "42"
    assert safe_text(ValueError("bad\x1b[31m")) == "bad"


@pytest.mark.parametrize("raw", ["a\tb", "a\nb", "a\r\nb", "a \n\t b", "a\u2028b"])
def test_one_line_joins_whitespace_into_single_spaces(raw):
    """Tabs, newlines and runs of spaces become one space; a separator is already a visible U+FFFD."""
    expected = "a\ufffdb" if "\u2028" in raw else "a b"
    assert one_line(raw) == expected
    assert "\n" not in one_line(raw) and "\t" not in one_line(raw)


def test_visible_names_exactly_the_characters_is_invisible_names():
    """visible() looks only at characters outside printable ASCII: on random text mixing ASCII,
    controls, format characters, separators, surrogates and symbols, it writes what naming each
    character by is_invisible writes, and counts what it names, for every ``keep``."""
    import random

    from grader.safetext import count_invisible, is_invisible, visible

    specials = [0x00, 0x07, 0x1B, 0x7F, 0x85, 0x9F, 0xAD, 0x200B, 0x202E, 0x2028, 0x2029, 0xFEFF, 0xD800, 0xDFFF]
    pool = [chr(c) for c in [*range(0x20, 0x7F), *specials, 0x2192, 0xD7, 0x1F600, 0xE0001]] + ["\n", "\t", "\r"]
    rng = random.Random(35)
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 30)))
        for keep in ("\n\t", "\n", ""):
            named = "".join(f"<U+{ord(ch):04X}>" if is_invisible(ch, keep) else ch for ch in text)
            assert visible(text, keep) == named, (text, keep)
            assert count_invisible(text, keep) == sum(is_invisible(ch, keep) for ch in text), (text, keep)
