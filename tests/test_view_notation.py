"""Unit tests of ``reports.view.notation``: every short form a report uses is explained where it
appears, and only there."""

from __future__ import annotations

from dataclasses import replace

from test_reports_samples import REPLAY_FAIL

from grader.judging.results import CheckLine
from reports.view import full_view
from reports.view.notation import case_notes, notation_notes


def test_every_notation_is_explained_where_it_appears():
    notes = notation_notes(
        ["pw = PiecewiseGraphRunner([matmul(3), attention(5)], is_capturable=CE)", "x: float32[4, 8] seed 1"]
    )
    text = " ".join(notes)
    assert "is_capturable=CEC: one letter per op" in text and "seed 1" in text and "matmul(3)" in text


def test_text_without_notation_needs_no_notes():
    assert notation_notes(["returned a GraphRunner", "launches during this call"]) == ()
    assert notation_notes([]) == ()


def test_notes_come_in_a_fixed_order_whatever_the_text_order():
    one = notation_notes(["cut short\u2026", "is_capturable=CE"])
    other = notation_notes(["is_capturable=CE", "cut short\u2026"])
    assert one == other and len(one) == 2 and one[0].startswith("is_capturable=")


def test_a_literal_array_is_explained_as_listed_values():
    (note,) = notation_notes(["x: float32[2, 2] (literal)"])
    assert note.startswith("(literal):")


def test_case_notes_read_the_steps_and_checks_of_the_case():
    """REPLAY_FAIL's steps hold ``float32[4, 8]`` without a seed: no note; a seed in a check adds one."""
    assert case_notes(full_view(REPLAY_FAIL)) == ()
    seeded = replace(REPLAY_FAIL, checks=(CheckLine(1, "input", "float32[4, 8] seed 7", "float32[4, 8] seed 7", True),))
    (note,) = case_notes(full_view(seeded))
    assert "random seed" in note
