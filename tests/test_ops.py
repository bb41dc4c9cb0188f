"""grader.ops: the grader's own ops, their seeded weights and the dtype names it records."""

from __future__ import annotations

import numpy as np
import pytest

from grader.ops import OpSpec, _host_weights, apply_chain, build_array, dtype_name
from grader.spec_model import ArrayValue


def test_seeded_weights_are_made_once_read_only_and_as_seeded():
    weights = _host_weights(7, 8, np.float32)
    assert _host_weights(7, 8, "float32") is weights  # made once per seed, size and dtype
    fresh = (np.random.default_rng(7).standard_normal((8, 8)) / np.sqrt(8)).astype(np.float32)
    np.testing.assert_array_equal(weights, fresh)
    assert not weights.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        weights[0, 0] = 1.0
    assert _host_weights(7, 8, np.float64).dtype == np.float64 and _host_weights(8, 8, np.float32) is not weights


def test_a_matmul_gives_the_same_result_every_call():
    x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    chain = (OpSpec("matmul", 3),)
    first = apply_chain(chain, x)
    np.testing.assert_array_equal(apply_chain(chain, x), first)
    np.testing.assert_allclose(first, x @ _host_weights(3, 8, np.float32))


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.dtype(">f4"), np.dtype("<U3"), np.dtype([("a", "i4"), ("b", "f8")]), object]
)
def test_dtype_name_is_str_of_the_dtype(dtype):
    dtype = np.dtype(dtype)
    assert dtype_name(dtype) == str(dtype)
    assert dtype_name(dtype) == str(dtype)  # remembered, still the same


@pytest.mark.parametrize(
    "value",
    [
        ArrayValue("float32", (3, 4), seed=7),
        ArrayValue("float16", (2,), seed=1),
        ArrayValue("int64", (2,), values=(1, 2)),
    ],
)
def test_each_built_array_is_a_new_writable_array_of_the_seeded_values(value):
    """Made once per process, copied for every case: a case that writes into its input changes
    nothing another case gets."""
    first = build_array(value)
    if value.values is None:
        expected = np.random.default_rng(value.seed).standard_normal(value.shape).astype(value.dtype)
    else:
        expected = np.array(value.values, dtype=value.dtype)
    assert first.dtype == expected.dtype and first.flags.writeable and first.flags.c_contiguous
    np.testing.assert_array_equal(first, expected)
    first[...] = 0
    second = build_array(value)
    assert second is not first and not np.shares_memory(first, second)
    np.testing.assert_array_equal(second, expected)
