"""The baseline a course would write by hand: one plain pytest file, run once per submission.

``benchmarks/throughput.py`` copies it next to a submission's ``cudagraph.py`` (as
``test_cudagraph.py``) and runs ``python -m pytest -q -p no:cacheprovider`` there. It makes
the same kind of checks as the spec suite (outputs, launch counts, ``num_captured``, buffer
identity), about thirty asserts, all in one process: no isolation, no hidden cases, no
feedback beyond pytest's own.
"""

import cudagraph as cg
import numpy as np
import pytest


def elementwise(fn):
    fn.elementwise = True
    return fn


@elementwise
def add1(x):
    return x + 1


@elementwise
def mul2(x):
    return x * 2


@elementwise
def relu(x):
    return np.maximum(x, 0)


W = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)


def matmul(x):
    return x @ W[: x.shape[-1], : x.shape[-1]]


class Recorder:
    """An op that remembers which array object it was handed."""

    def __init__(self):
        self.seen = []

    def __call__(self, x):
        self.seen.append(x)
        return x + 0


def chain(ops, x):
    for op in ops:
        x = op(x)
    return x


def rand(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.fixture(autouse=True)
def fresh_counter():
    cg.LaunchCounter.n = 0
    yield


def test_launch_counter():
    cg.LaunchCounter.bump()
    cg.LaunchCounter.bump(3)
    assert cg.LaunchCounter.n == 4
    cg.LaunchCounter.reset()
    assert cg.LaunchCounter.n == 0


def test_run_eager():
    ops = [add1, mul2, relu]
    x = rand((4, 8), 1)
    out = cg.run_eager(ops, x)
    assert np.allclose(out, chain(ops, x))
    assert cg.LaunchCounter.n == 3


def test_capture_then_replay():
    ops = [add1, matmul, relu, mul2]
    runner = cg.GraphRunner(ops)
    x1, x2 = rand((4, 8), 2), rand((4, 8), 3)
    out1 = np.array(runner(x1))
    assert cg.LaunchCounter.n == 4
    assert runner.num_captured == 1
    before = cg.LaunchCounter.n
    out2 = np.array(runner(x2))
    assert cg.LaunchCounter.n - before == 1
    assert np.allclose(out1, chain(ops, x1), atol=1e-5)
    assert np.allclose(out2, chain(ops, x2), atol=1e-5)
    assert runner.num_captured == 1


def test_one_graph_per_shape():
    runner = cg.GraphRunner([add1, mul2])
    runner(rand((2, 8), 4))
    runner(rand((4, 8), 5))
    runner(rand((2, 8), 6))
    assert runner.num_captured == 2
    assert len(runner.graphs) == 2


def test_static_buffer_is_reused():
    rec = Recorder()
    runner = cg.GraphRunner([rec, add1])
    x1, x2, x3 = rand((3, 8), 7), rand((3, 8), 8), rand((3, 8), 9)
    runner(x1)
    runner(x2)
    out3 = np.array(runner(x3))
    assert rec.seen[0] is rec.seen[1] is rec.seen[2]
    assert rec.seen[1] is not x2
    [entry] = runner.graphs.values()
    assert entry.static_input is rec.seen[0]
    assert np.array_equal(entry.static_input, x3)
    assert np.allclose(out3, x3 + 1)


def test_padding():
    runner = cg.GraphRunner([add1, mul2], capture_sizes=[1, 2, 4, 8])
    x5, x7 = rand((5, 6), 10), rand((7, 6), 11)
    out5 = np.array(runner(x5))
    out7 = np.array(runner(x7))
    assert out5.shape == (5, 6) and out7.shape == (7, 6)
    assert np.allclose(out7, (x7 + 1) * 2)
    assert runner.num_captured == 1
    before = cg.LaunchCounter.n
    runner(rand((9, 6), 12))
    assert cg.LaunchCounter.n - before == 2
    assert runner.num_captured == 1


def test_warmup():
    runner = cg.GraphRunner([add1, mul2, relu], warmup_steps=2)
    for i in range(2):
        runner(rand((2, 4), 20 + i))
    assert runner.num_captured == 0
    runner(rand((2, 4), 22))
    assert runner.num_captured == 1


def test_piecewise():
    ops = [add1, mul2, relu, add1]
    runner = cg.PiecewiseGraphRunner(ops, lambda i: i != 2)
    assert runner.num_graphs == 2
    x = rand((4, 8), 13)
    runner(x)
    before = cg.LaunchCounter.n
    out = runner(rand((4, 8), 14))
    assert cg.LaunchCounter.n - before == 3
    assert np.allclose(out, chain(ops, rand((4, 8), 14)))


def test_fusion():
    fused = cg.fuse_elementwise([add1, mul2, matmul, relu, add1])
    assert len(fused) == 3
    assert getattr(fused[0], "elementwise", False)
    x = rand((2, 8), 15)
    assert np.allclose(chain(fused, x), chain([add1, mul2, matmul, relu, add1], x), atol=1e-5)


def test_state_machine():
    sm = cg.InferenceGraphCapture(2, enabled=True)
    modes = []
    for _ in range(4):
        modes.append(sm.step_mode())
        if modes[-1] == cg.StepMode.CAPTURE:
            sm.record_capture(7, 4, 1)
        sm.advance()
    assert modes == [cg.StepMode.WARMUP, cg.StepMode.WARMUP, cg.StepMode.CAPTURE, cg.StepMode.REPLAY]
    assert sm.is_captured and sm.check_static_shape(4, 1)
    assert not sm.check_static_shape(4, 2)
    sm.disable()
    assert sm.step_mode() == cg.StepMode.WARMUP
