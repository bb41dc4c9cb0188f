"""The CUDA-graph lab's op vocabulary (labs/cudagraph/pack/ops.py): the grader's own ops, their
seeded weights; and the engine's arrays (grader.arrays): the dtype names and addresses it records."""

from __future__ import annotations

import numpy as np
import pytest
from support.lab_ops import ops

from grader import arrays
from grader.arrays import build_array, dtype_name
from grader.spec_model import ArrayValue, OpSpec

_host_weights, apply_chain = ops._host_weights, ops.apply_chain


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


# ------------------------------------------------------------------ evidence out of reach (issue 31)
class _Lying(np.ndarray):
    """Reports another buffer's address through the attributes a subclass can override."""

    claimed = 0

    @property
    def __array_interface__(self):
        real = np.asarray(self).__array_interface__
        return {**real, "data": (self.claimed, False)}


def _address(x: np.ndarray) -> int:
    return np.ndarray.__dict__["__array_interface__"].__get__(x)["data"][0]


@pytest.mark.parametrize("host_only", [False, True])
def test_an_op_records_the_real_address_of_a_lying_subclass(monkeypatch, host_only):
    monkeypatch.setattr(arrays, "_HOST_ONLY", host_only)
    static, fresh = np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)
    lying = fresh.view(_Lying)
    lying.claimed = _address(static)
    assert lying.__array_interface__["data"][0] == _address(static)  # the lie, as numpy's callers see it
    witness = ops.Witness()
    (op,) = ops.make_ops((OpSpec("relu"),), 0, witness)
    out = op(lying)
    assert witness.calls[-1][2] == _address(fresh) != _address(static)
    assert type(out) is np.ndarray  # computed on the plain array, not through the subclass
    np.testing.assert_array_equal(out, np.maximum(fresh, 0))


def test_in_a_worker_no_object_is_a_device_array_by_its_module_name(monkeypatch):
    class Fake(np.ndarray):
        pass

    Fake.__module__ = "cupy._core"
    fake = np.zeros(3, np.float32).view(Fake)
    assert arrays.is_device_array(fake)  # trusted processes: the CuPy stand-in's arrays look like this
    monkeypatch.setattr(arrays, "_HOST_ONLY", True)
    assert not arrays.is_device_array(fake)
    assert arrays.data_address(fake) == _address(fake)


def test_no_attribute_of_an_op_reaches_its_log():
    witness = ops.Witness()
    (op,) = ops.make_ops((OpSpec("tanh"),), 3, witness)
    op(np.zeros((2, 2), np.float32))
    reachable = [getattr(op, name, None) for name in dir(op)] + [getattr(type(op), n, None) for n in dir(type(op))]
    assert not any(value is witness or value is witness.calls for value in reachable)
    assert not hasattr(op, "_wit" + "ness")
    op.list_id, op.position = 9, 9  # the op's own attributes are the submission's: never read back
    assert ops.case_op_place(op, witness) == (3, 0) and ops.case_op_place(op, ops.Witness()) is None
    op(np.zeros((2, 2), np.float32))
    assert [call[:2] for call in witness.calls] == [(3, 0), (3, 0)]
    with pytest.raises(TypeError, match="made once"):  # no second place or log for a live op
        type(op).__init__(op, OpSpec("tanh"), 0, 0, ops.Witness())
    witness.close()
    op(np.zeros((2, 2), np.float32))  # an op of a closed case computes and records nothing
    assert len(witness.calls) == 2


def test_a_class_patch_put_back_before_the_case_ends_is_seen():
    from grader.run.worker import guard

    witness = ops.Witness()
    (op,) = ops.make_ops((OpSpec("relu"),), 0, witness)
    cls = type(op)
    real = cls.__call__
    assert guard.changed() is None
    cls.__call__ = lambda self, x: real(self, x)
    try:
        op(np.zeros(2, np.float32))
    finally:
        cls.__call__ = real
    assert ops.class_change() is None  # put back: comparing after the case would see nothing
    assert guard.changed() == "GraderOp.__call__"  # ...but the op's own call saw it
    assert guard.changed() is None  # and it is told once


def test_a_function_of_the_op_class_whose_code_is_replaced_is_seen():
    from grader.run.worker import guard

    call = ops.GraderOp.__call__
    code = call.__code__
    call.__code__ = (lambda self, x: x).__code__  # the class's namespace is unchanged
    try:
        assert ops.class_change() == "GraderOp.__call__'s code"
        assert guard.changed() == "GraderOp.__call__'s code"
    finally:
        call.__code__ = code
    assert ops.class_change() is None and guard.changed() is None
