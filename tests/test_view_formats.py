"""Unit tests of ``reports.view.formats``: numbers as every report writes them."""

from __future__ import annotations

import math

import pytest

from reports import view as _view
from reports.view.formats import fmt_percent, fmt_points, fmt_seconds, percent, step_no


def test_number_formats():
    assert _view.fmt_points(7.0) == "7"
    assert _view.fmt_points(7.5) == "7.5"
    assert _view.fmt_points(7.25) == "7.25"
    assert _view.fmt_points(1 / 3) == "0.33"
    assert _view.fmt_points(-0.0) == "0"
    assert _view.fmt_percent(66.0) == "66%"
    assert _view.fmt_percent(66.06) == "66.1%"


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, None])
def test_a_number_that_is_not_finite_is_written_as_zero(bad):
    """A report never shows 'nan' or 'inf' points to a student."""
    assert fmt_points(bad) == "0"
    if bad is not None:
        assert fmt_percent(bad) == "0%"


def test_a_tiny_negative_rounds_to_zero_not_minus_zero():
    assert fmt_points(-0.001) == "0"
    assert fmt_points(-1.5) == "-1.5"


def test_percent_of_nothing_is_zero():
    assert percent(3, 0) == 0.0 and percent(1, 4) == 25.0


@pytest.mark.parametrize(
    "seconds, text",
    [(0.0123, "12 ms"), (1.25, "1.2 s"), (59.94, "59.9 s"), (61.0, "1 min 1 s"), (3725.0, "62 min 5 s")],
)
def test_durations_in_the_unit_a_reader_expects(seconds, text):
    assert fmt_seconds(seconds) == text


@pytest.mark.parametrize("seconds", [0.0, -1.0, math.nan, math.inf, None])
def test_no_duration_is_shown_when_there_is_none_to_show(seconds):
    assert fmt_seconds(seconds) == ""


def test_steps_are_stored_from_zero_and_read_from_one():
    assert step_no(0) == "1" and step_no(9) == "10" and step_no(None) == ""
