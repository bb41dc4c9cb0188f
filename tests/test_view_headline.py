"""Unit tests of ``reports.view.headline``: the short, kind sentence at the top of a report."""

from __future__ import annotations

from dataclasses import replace

from test_reports_samples import REPLAY_FAIL, failing_report, make_report, passing_report, problem_report

from reports import view as _view
from reports.view.headline import headline


def test_headline_is_kind():
    assert _view.headline(passing_report()).mood == "all"
    assert _view.headline(failing_report()).mood in ("most", "some")
    assert _view.headline(problem_report()).mood == "problem"


def test_the_mood_follows_how_many_cases_pass():
    """``most`` when at least half pass, ``some`` below that, ``none`` when none pass or none ran."""
    passed = replace(REPLAY_FAIL, status="passed", score=REPLAY_FAIL.max_score)
    assert headline(make_report("half", [passed, REPLAY_FAIL])).mood == "most"
    assert headline(make_report("third", [passed, REPLAY_FAIL, REPLAY_FAIL])).mood == "some"
    assert headline(make_report("zero", [REPLAY_FAIL, REPLAY_FAIL])).mood == "none"
    assert headline(make_report("empty", [])).mood == "none"


def test_the_title_counts_what_is_left_in_words():
    passed = replace(REPLAY_FAIL, status="passed", score=REPLAY_FAIL.max_score)
    assert headline(make_report("one", [passed, passed, REPLAY_FAIL])).title == "2 of 3 cases pass, 1 to go"
    assert headline(make_report("zero", [REPLAY_FAIL])).title == "1 case to go"
    assert headline(make_report("zero", [REPLAY_FAIL, REPLAY_FAIL])).title == "2 cases to go"


def test_a_problem_comes_first_even_when_every_case_passes():
    """A submission-wide problem (an import error) is the headline whatever the cases say."""
    assert headline(replace(passing_report(), problem="cudagraph.py could not be imported")).mood == "problem"
