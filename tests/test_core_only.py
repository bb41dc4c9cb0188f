"""The core/stretch line: a submission of only the core keeps every core point.

The lab's core is the launch counter, eager execution, GraphRunner without
padding or warm-up, and PiecewiseGraphRunner; padding, warm-up, fusion and the
state machine are stretch goals. A core case that quietly needs a stretch
feature would take core points from a student who did exactly what the core
asks. This builds such a student: the reference with ``capture_sizes`` and
``warmup_steps`` accepted but ignored, and ``fuse_elementwise`` and
``InferenceGraphCapture`` left as the template leaves them (raising
NotImplementedError), and grades it on every case through the worker's
interpreter and the judge.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from support.shipped import shipped_suite

from grader.judging.judge import judge_case
from grader.lab import active as active_lab
from grader.observe.interpreter import observe_in_process
from reference.mutants._base import fresh_reference

CORE_TAGS = active_lab().core_tags

ROOT = Path(__file__).resolve().parents[1]
LOADED = shipped_suite()
TAG_OF = {case.uid: spec.tag for spec in LOADED.suite.specs for case in spec.cases}


def core_only() -> types.ModuleType:
    """A fresh module: the reference's core, with every stretch feature missing."""
    module = fresh_reference(__name__)
    full_runner = module.GraphRunner

    class GraphRunner(full_runner):
        def __init__(self, ops, capture_sizes=None, warmup_steps=0):
            super().__init__(ops)  # no padding, no warm-up: the stretch arguments are ignored

    def fuse_elementwise(ops):
        raise NotImplementedError

    class InferenceGraphCapture:
        def __init__(self, warmup_steps, enabled=False):
            raise NotImplementedError

    module.GraphRunner = GraphRunner  # PiecewiseGraphRunner looks GraphRunner up here too
    module.fuse_elementwise = fuse_elementwise
    module.InferenceGraphCapture = InferenceGraphCapture
    return module


def grade(case):
    observation = observe_in_process(core_only(), case.uid, case.steps)
    return judge_case(case, LOADED.oracles[case.uid], observation)


CORE_CASES = [c for c in LOADED.suite.cases if TAG_OF[c.uid] in CORE_TAGS]
STRETCH_CASES = [c for c in LOADED.suite.cases if TAG_OF[c.uid] not in CORE_TAGS]


@pytest.mark.parametrize("case", CORE_CASES, ids=[c.uid for c in CORE_CASES])
def test_a_core_only_submission_passes_every_core_case(case):
    verdict = grade(case)
    assert verdict.status == "passed", (
        f"{case.file}:{case.line}: {case.uid} is tagged {TAG_OF[case.uid]} but needs a stretch feature: {verdict.message}"
    )


def test_the_core_is_worth_70_points_and_the_stretch_goals_are_not_free():
    core_points = sum(s.points for s in LOADED.suite.specs if s.group == "core")
    assert core_points == pytest.approx(70)
    assert all(s.tag in CORE_TAGS for s in LOADED.suite.specs if s.group == "core")
    failed = {TAG_OF[c.uid] for c in STRETCH_CASES if grade(c).status != "passed"}
    # and the notebook answers (counted with the stretch group): this module, made in memory, answers nothing
    assert failed == {"padding", "warmup", "fusion", "state-machine", "notebook-answers"}
