"""Padded rows are zero on every call: the op witness sees it, the judge checks it.

The contract (docs/contract.md, "Padding") says the rows of a padded static
buffer beyond the real batch are zero on every call, capture and replay. The
grader's ops count the trailing all-zero rows of the array they are handed;
the ``padded_rows`` check compares that count with the padding the call
needed.
"""

from __future__ import annotations

import numpy as np
import pytest

from grader.arrays import trailing_zero_rows
from grader.judging.judge import judge_case
from grader.observe.interpreter import observe_in_process
from grader.suite.loader import load_spec_text
from reference.mutants._base import fresh_reference

SPEC = """\
format: 1
specs:
  - id: pad
    title: Padding
    tag: padding
    points: 1
    visibility: visible
    explanation: Explains the behaviour.
    hint: Points at the code.
    cases:
      - id: shrink
        description: A batch of 4, then a batch of 3, in one size-4 graph.
        steps:
          - build: GraphRunner
            as: runner
            args: [{ops: [{add: 1.0}, tanh]}]
            kwargs: {capture_sizes: [2, 4]}
          - call: runner
            as: three
            args: [{array: {shape: [3, 5], dtype: float32, seed: 1}}]
          - call: runner
            as: four
            args: [{array: {shape: [4, 5], dtype: float32, seed: 2}}]
          - call: runner
            as: again
            args: [{array: {shape: [3, 5], dtype: float32, seed: 3}}]
        checks:
          - padded_rows: {of: runner, steps: [three, again]}
          - output: {step: again, oracle: true}
"""


def load():
    oracles: dict = {}
    spec_file = load_spec_text(SPEC, "pad.yaml", oracles)
    case = spec_file.specs[0].cases[0]
    return case, oracles[case.uid]


def grade(module):
    case, oracles = load()
    return judge_case(case, oracles, observe_in_process(module, case.uid, case.steps))


@pytest.mark.parametrize(
    ("array", "expected"),
    [
        (np.zeros((4, 3)), 4),
        (np.array([[1.0, 0], [0, 0], [0, 0]]), 2),
        (np.array([[0.0, 0], [1, 0], [0, 0]]), 1),
        (np.ones((2, 2, 2)), 0),
        (np.zeros((0, 3)), 0),
        (np.float32(1.0), -1),
        ([1.0, 0.0], -1),
    ],
)
def test_trailing_zero_rows(array, expected):
    assert trailing_zero_rows(array) == expected


def test_the_reference_zeroes_the_padded_rows_on_every_call():
    verdict = grade(fresh_reference(__name__))
    assert verdict.status == "passed", verdict.message


def _stale_rows_module():
    """Pads a fresh buffer with zeros at capture, but never zeroes the padded rows again."""
    ref = fresh_reference(__name__)

    def _load(static_input, x):
        np.copyto(static_input[: x.shape[0]], x)

    ref.GraphRunner._load = staticmethod(_load)
    return ref


def _empty_buffer_module():
    """Makes the padded buffer with np.empty and only ever copies the real rows in."""
    ref = fresh_reference(__name__)

    def _capture(self, key, x):
        static_input = np.empty(key, dtype=x.dtype)
        static_input[:] = np.nan  # what np.empty may hold: anything
        np.copyto(static_input[: x.shape[0]], x)
        output = ref.run_eager(self.ops, static_input)
        self.graphs[key] = ref.GraphEntry(key, static_input, output, len(self.ops))
        return self._real_rows(output, x)

    def _load(static_input, x):
        np.copyto(static_input[: x.shape[0]], x)

    ref.GraphRunner._capture = _capture
    ref.GraphRunner._load = staticmethod(_load)
    return ref


@pytest.mark.parametrize("make", [_stale_rows_module, _empty_buffer_module], ids=["zeroed-once", "np-empty"])
def test_stale_padded_rows_fail_with_a_message_that_says_so(make):
    verdict = grade(make())
    assert verdict.status == "failed"
    assert "padded rows" in verdict.message and "not all zero" in verdict.message
    assert (
        verdict.message.startswith("Step 3")
        or verdict.message.startswith("Step 2")
        or verdict.message.startswith("Step 4")
    )


def test_an_unpadded_buffer_fails_the_check():
    ref = fresh_reference(__name__)
    ref.GraphRunner._graph_key = lambda self, x: x.shape  # never pads
    verdict = grade(ref)
    assert verdict.status == "failed" and "not the 4 rows of the padded batch" in verdict.message
