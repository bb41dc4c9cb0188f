"""The handout is the law: a build that does exactly what the handout's core steps say keeps
every core point.

tests/support/handout_literal/cudagraph.py is written from the lab handout's steps 1-4 alone (a
namedtuple GraphEntry; a replay that copies x into the static buffer, recomputes, bumps once and
returns without writing entry.output). Graded on every case of the shipped suite, it keeps all 70
core points; what it loses is graphgrade's stricter readings (counted outside the core) and the
stretch goals it never wrote.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from support.shipped import shipped_suite

from grader.judging.judge import judge_case
from grader.judging.scoring import add_points, split_points
from grader.observe.interpreter import observe_in_process

BUILD = Path(__file__).parent / "support" / "handout_literal" / "cudagraph.py"
LOADED = shipped_suite()
CORE_SPECS = [s for s in LOADED.suite.specs if s.group == "core"]


def _handout_build():
    spec = importlib.util.spec_from_file_location("handout_literal_cudagraph", BUILD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _points(specs) -> tuple[float, float, list[str]]:
    earned, possible, failed = [], [], []
    for spec in specs:
        for case, share in zip(spec.cases, split_points(spec.points, len(spec.cases))):
            verdict = judge_case(
                case, LOADED.oracles[case.uid], observe_in_process(_handout_build(), case.uid, case.steps)
            )
            possible.append(share)
            if verdict.status == "passed":
                earned.append(share)
            else:
                failed.append(f"{case.file}:{case.line}: {case.uid}: {verdict.message}")
    return add_points(earned), add_points(possible), failed


def test_the_handout_literal_build_keeps_70_of_70_core_points():
    earned, possible, failed = _points(CORE_SPECS)
    assert possible == pytest.approx(70)
    assert not failed, "the handout-literal build loses core points:\n" + "\n".join(failed)
    assert earned == pytest.approx(70)


def test_what_it_loses_is_graphgrades_stricter_reading_and_the_stretch_goals():
    stricter = [s for s in LOADED.suite.specs if s.group == "stricter"]
    assert stricter, "no spec is marked reading: graphgrade on a core tag"
    earned, possible, failed = _points(stricter)
    assert earned < possible and failed  # entry.output after a replay is graphgrade's reading only
    assert all("entry.output" in line for line in failed)
    stretch_earned, stretch_possible, _ = _points([s for s in LOADED.suite.specs if s.group == "stretch"])
    answers = sum(s.points for s in LOADED.suite.specs if s.group == "answers")
    assert answers == pytest.approx(6)  # the notebook answers: a group of their own
    assert stretch_possible == pytest.approx(106 - 70 - possible - answers)
    assert stretch_earned < stretch_possible
