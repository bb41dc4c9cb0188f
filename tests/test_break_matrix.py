"""A broken part costs only its own behaviour: the break matrix.

From a correct solution (the reference, and each correct variant written apart from it), one
submission per part in which only that part raises
NotImplementedError, graded on every case of the shipped suite (hidden ones included) through the
worker's interpreter and the judge. Each must lose points on that part's tag and on no other:
padding and warm-up extend GraphRunner, fusion extends run_eager, the state machine stands alone,
and a case that exercises PiecewiseGraphRunner is a piecewise case (docs/contract.md, "What each
part's cases use").
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from support.shipped import shipped_suite

from grader.judging.answers import read_answers
from grader.judging.judge import judge_case
from grader.observe.interpreter import observe_in_process
from reference.mutants._base import REFERENCE_SOURCE, fresh_module

TESTS = Path(__file__).parent
SOLUTIONS = {
    "reference": REFERENCE_SOURCE,
    **{p.parent.name: p for p in sorted((TESTS / "correct_variants").glob("*/cudagraph.py"))},
}

LOADED = shipped_suite()
TAG_OF = {case.uid: spec.tag for spec in LOADED.suite.specs for case in spec.cases}


def _unwritten(*_args, **_kwargs):
    raise NotImplementedError


def _break_piecewise(module: types.ModuleType) -> None:
    class PiecewiseGraphRunner:
        __init__ = _unwritten

    module.PiecewiseGraphRunner = PiecewiseGraphRunner


def _break_fusion(module: types.ModuleType) -> None:
    module.fuse_elementwise = _unwritten


def _break_state_machine(module: types.ModuleType) -> None:
    class InferenceGraphCapture:
        __init__ = _unwritten

    module.InferenceGraphCapture = InferenceGraphCapture


def _break_runner_argument(module: types.ModuleType, unwritten) -> None:
    full = module.GraphRunner

    class GraphRunner(full):
        def __init__(self, ops, capture_sizes=None, warmup_steps=0):
            if unwritten(capture_sizes, warmup_steps):
                raise NotImplementedError
            super().__init__(ops, capture_sizes, warmup_steps)

    module.GraphRunner = GraphRunner  # PiecewiseGraphRunner looks GraphRunner up here too


BREAKS = {
    "piecewise": _break_piecewise,
    "fusion": _break_fusion,
    "state-machine": _break_state_machine,
    "padding": lambda m: _break_runner_argument(m, lambda sizes, _warmup: sizes is not None),
    "warmup": lambda m: _break_runner_argument(m, lambda _sizes, warmup: warmup > 0),
}


def _failed_tags(breaking, solution: Path = REFERENCE_SOURCE) -> dict[str, list[str]]:
    failed: dict[str, list[str]] = {}
    answers = read_answers(solution.parent)  # each solution's answers.md (the notebook-answers tag)
    for case in LOADED.suite.cases:
        module = fresh_module(solution, __name__)
        breaking(module)
        observed = observe_in_process(module, case.uid, case.steps)
        verdict = judge_case(case, LOADED.oracles[case.uid], observed, answers)
        if verdict.status != "passed":
            failed.setdefault(TAG_OF[case.uid], []).append(f"{case.uid}: {verdict.message}")
    return failed


# The reference in every run; the correct variants (about 10 s more) with the slow tests.
SOLUTION_PARAMS = [name if name == "reference" else pytest.param(name, marks=pytest.mark.slow) for name in SOLUTIONS]


@pytest.mark.parametrize("solution", SOLUTION_PARAMS)
def test_the_unbroken_solution_loses_nothing(solution):
    assert _failed_tags(lambda module: None, SOLUTIONS[solution]) == {}


@pytest.mark.parametrize("solution", SOLUTION_PARAMS)
@pytest.mark.parametrize("part", sorted(BREAKS))
def test_an_unwritten_part_costs_only_its_own_tag(part, solution):
    failed = _failed_tags(BREAKS[part], SOLUTIONS[solution])
    assert part in failed, f"with {part} unwritten no {part} case fails: the break did not break anything"
    others = {tag: uids for tag, uids in failed.items() if tag != part}
    assert not others, f"with only {part} unwritten, other behaviours pay:\n" + "\n".join(
        line for uids in others.values() for line in uids
    )
