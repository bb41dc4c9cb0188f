"""Unit tests of ``grader.spec.describing``: values in words, bounded whatever a submission returns;
array comparison that says where arrays differ; and the kind of each step (an eager run is not a
replay)."""

from __future__ import annotations

import numpy as np
import pytest

from grader.lab import active
from grader.lab.loading import pack_attribute
from grader.spec.describing import MAX_DESCRIBED, MAX_ITEMS, compare_arrays, cut, describe
from grader.spec_model import Case, Step


def test_an_array_is_described_by_dtype_shape_and_first_values():
    assert describe(np.arange(6, dtype=np.float32).reshape(2, 3)) == "float32[2, 3] = [0, 1, 2, 3, …]"
    assert describe(np.array([0.5, 1 / 3])) == "float64[2] = [0.5, 0.3333]"


@pytest.mark.parametrize(
    "value",
    ["x" * 100_000, tuple(range(10_000)), tuple("y" * 1000 for _ in range(50)), np.zeros((1000, 1000)), 10**1000],
    ids=["string", "long-tuple", "tuple-of-long-strings", "big-array", "huge-int"],
)
def test_whatever_a_submission_returns_its_description_is_bounded(value):
    assert len(describe(value)) <= MAX_DESCRIBED


def test_a_long_tuple_shows_its_first_items_then_an_ellipsis():
    text = describe(tuple(range(20)))
    assert text.startswith("[0, 1, 2") and text.endswith(", …]")
    assert text.count(",") == MAX_ITEMS  # MAX_ITEMS items and the ellipsis


def test_cut_keeps_short_text_and_marks_what_it_cut():
    assert cut("abc", 3) == "abc"
    assert cut("abcd", 3) == "ab…" and len(cut("abcd", 3)) == 3


def test_arrays_equal_within_tolerance_compare_as_equal():
    expected = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    assert compare_arrays(expected, expected + np.float32(1e-7), "float32") is None
    assert compare_arrays(expected.astype(np.float64), expected.astype(np.float64) + 1e-7, "float64") is not None


def test_a_difference_is_reported_at_its_first_index_with_a_count():
    expected = np.zeros((2, 3))
    observed = expected.copy()
    observed[1, 0] = 2.5
    observed[1, 2] = -1.0
    assert compare_arrays(expected, observed, "float64") == (
        "at index [1, 0] the value is 2.5 but should be 0 (2 of 6 values differ)"
    )


@pytest.mark.parametrize(
    "observed, message",
    [
        (np.zeros((3, 2)), "shape [3, 2] instead of [2, 3]"),
        ([[0, 0, 0], [0, 0, 0]], "expected an array, got [[0, 0, 0], [0, 0, 0]]"),
        (np.array([["a"] * 3] * 2), "dtype <U1 is not numeric"),
    ],
)
def test_an_observation_that_is_not_a_matching_array_is_named(observed, message):
    assert compare_arrays(np.zeros((2, 3)), observed, "float64") == message


def _case(*steps: Step) -> Case:
    return Case(spec="s", id="c", description="", steps=tuple(steps), checks=())


def test_step_kinds_follow_the_calls_of_each_runner():
    """The first call of a runner captures, its later calls replay; run_eager is eager; building
    a runner or reading it is neither."""
    step_kind = pack_attribute(active(), "pack.checks.runner_steps:step_kind")  # the lab's own vocabulary
    case = _case(
        Step(0, "build", "GraphRunner", name="a"),
        Step(1, "call", "a"),
        Step(2, "call", "run_eager"),
        Step(3, "call", "a"),
        Step(4, "build", "GraphRunner", name="b"),
        Step(5, "call", "b"),
        Step(6, "read", "num_captured", on="a"),
    )
    assert [step_kind(case, i) for i in range(7)] == [
        "other",
        "capture",
        "eager",
        "replay",
        "other",
        "capture",
        "other",
    ]


def test_exactly_equal_arrays_compare_as_equal_whatever_their_dtypes():
    """The shortcut for equal arrays gives what the tolerance comparison gives."""
    expected = np.array([[0.0, -0.0, np.inf], [-np.inf, 1e30, 2.0]])
    assert compare_arrays(expected, expected.copy(), "float64") is None
    assert compare_arrays(expected, np.array([[-0.0, 0.0, np.inf], [-np.inf, 1e30, 2.0]]), "float64") is None
    assert compare_arrays(np.array([1.0, 2.0]), np.array([1, 2], dtype=np.int64), "float64") is None
    assert compare_arrays(expected, expected[:, ::-1].copy(), "float64").startswith("at index [0, 0]")
