"""Unit tests of ``grader.suite.yaml_errors``: real PyYAML syntax errors (from the pure-Python parser,
which the loader falls back to for every error) explained in words, at the line to fix.

Each case is a small broken spec; the test pins the line the explanation points at and the words
it uses, and, where the module promises it, that this line is not the one PyYAML points at (an
unclosed quote is noticed at the end of the file, a missing colon a line later)."""

from __future__ import annotations

import pytest
import yaml

from grader.suite.yaml_errors import explain


def _error(text: str) -> yaml.MarkedYAMLError:
    with pytest.raises(yaml.MarkedYAMLError) as info:
        yaml.load(text, Loader=yaml.SafeLoader)  # the pure-Python parser, as the loader uses for errors
    return info.value


def _explain(text: str) -> tuple[int, str, int]:
    """(line explained, message, line PyYAML's problem mark points at), lines 1-based."""
    exc = _error(text)
    line, message = explain(exc, text)
    return line, message, exc.problem_mark.line + 1


def test_a_tab_in_the_indentation_is_named_as_a_tab():
    line, message, _ = _explain("id: a\ncases:\n\t- x: 1\n")
    assert line == 3 and message.startswith("a tab character") and "spaces" in message


@pytest.mark.parametrize("quote", ['"', "'"])
def test_an_unclosed_quote_points_at_the_line_that_opened_it(quote):
    text = f"id: a\ntitle: {quote}never closed\npoints: 2\nhint: x\n"
    line, message, pyyaml_line = _explain(text)
    assert line == 2 and pyyaml_line > 2  # PyYAML notices it at the end of the file
    assert f"a {quote} quote opened here is never closed" in message


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{", "}")])
def test_an_unclosed_bracket_points_at_the_line_that_opened_it(opening, closing):
    inner = "4, 8" if opening == "[" else "a: 1"
    line, message, pyyaml_line = _explain(f"id: a\nshape: {opening}{inner}\npoints: 2\n")
    assert line == 2 and pyyaml_line == 3
    assert f"a '{opening}' opened here" in message and f"missing '{closing}'" in message


def test_a_key_without_its_colon_is_named_with_its_text():
    line, message, pyyaml_line = _explain("id: a\ntitle hello\npoints: 2\n")
    assert line == 2 and pyyaml_line == 3  # PyYAML complains a line later
    assert "'title hello' needs a ':'" in message


def test_a_list_item_without_its_colon_says_how_to_write_it():
    line, message, pyyaml_line = _explain("steps:\n  - call runner\n    x: 1\n")
    assert line == 2 and pyyaml_line == 3
    assert "'- call runner' needs a ':'" in message and "'- key: value'" in message


def test_a_second_colon_on_a_line_asks_for_quotes():
    line, message, _ = _explain("id: a\ntitle: a: b\n")
    assert line == 2 and "second ':'" in message and "quotes" in message


def test_a_key_indented_further_than_its_siblings_names_both_columns():
    line, message, _ = _explain("id: a\n  title: b\n")
    assert line == 2 and "column 3, not 1" in message


@pytest.mark.parametrize(
    "text, where",
    [("id: a\ncases:\n  - x: 1\n   y: 2\n", 4), ("a:\n    b: 1\n  c: 2\n", 3)],
    ids=["list-item", "mapping"],
)
def test_a_misaligned_line_is_an_indentation_error_at_that_line(text, where):
    line, message, _ = _explain(text)
    assert line == where and message.startswith("the indentation here") and "same column" in message


def test_a_character_that_cannot_start_a_value_asks_for_quotes():
    line, message, _ = _explain("id: a\ntitle: @home\n")
    assert line == 2 and message == "the character '@' that cannot start any token: put the value in quotes."


def test_every_explanation_is_one_line_of_words_not_parser_jargon():
    for text in (
        "id: a\ncases:\n\t- x: 1\n",
        'a: "x\n',
        "a: [1\nb: 2\n",
        "a\n  b: 1\n",
        "a: b: c\n",
        "a:\n    b: 1\n  c: 2\n",
    ):
        _, message, _ = _explain(text)
        assert "\n" not in message and "<block" not in message and "scalar" not in message, message
