"""The CUDA path: backend selection, the CuPy runner, the benchmark.

Three groups:

- CPU tests (always run): backend selection and its error messages, that the
  CUDA modules import without CuPy, the CPU benchmark.
- Strict stand-in tests (always run) live in ``test_strict_cupy.py``: the
  runner, the grader's ops, validate and bench against a CPU stand-in for
  CuPy that records work during capture and refuses what CUDA refuses.
- GPU tests (``-m gpu``): the same behaviours on real CuPy and a real GPU;
  skipped with the reason when ``reference.cuda.is_available()`` says no.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from reference import backend as backend_mod
from reference import bench, cuda
from reference import cudagraph as sim
from reference.backend import (
    CONTRACT_NAMES,
    BackendUnavailable,
    BackendUnsupported,
    load_backend,
)

ROOT = Path(__file__).resolve().parents[1]


def launches(fn) -> int:
    before = sim.LaunchCounter.n
    fn()
    return sim.LaunchCounter.n - before


@pytest.fixture
def no_cupy(monkeypatch):
    """Make ``import cupy`` fail, whether or not CuPy is installed."""
    monkeypatch.setitem(sys.modules, "cupy", None)


# ==========================================================================
# CPU: backend selection
# ==========================================================================


class TestBackendSelection:
    def test_numpy_backend_is_the_simulation(self):
        b = load_backend("numpy")
        assert b.name == "numpy"
        for name in CONTRACT_NAMES:
            assert getattr(b, name) is getattr(sim, name)
        x = np.arange(6.0).reshape(2, 3)
        assert b.prepare_input(x) is x
        assert b.to_host(x) is x
        op = lambda a: a + 1  # noqa: E731
        assert b.wrap_op(op) is op

    def test_numpy_backend_runs_the_contract(self):
        b = load_backend("numpy")
        runner = b.GraphRunner([lambda a: a + 1, lambda a: a * 2])
        x = b.prepare_input(np.ones((2, 3)))
        runner(x)
        assert launches(lambda: runner(x)) == 1
        np.testing.assert_array_equal(b.to_host(runner(x)), np.full((2, 3), 4.0))

    def test_numpy_backend_needs_no_cupy(self, no_cupy):
        assert load_backend("numpy").name == "numpy"

    def test_name_is_trimmed_and_case_insensitive(self):
        assert load_backend(" NumPy ").name == "numpy"

    def test_cupy_without_cupy_says_how_to_install(self, no_cupy):
        with pytest.raises(BackendUnavailable) as info:
            load_backend("cupy")
        message = str(info.value)
        assert message == "CuPy is not installed: pip install 'graphgrade[cuda]'"
        assert "\n" not in message

    def test_cupy_without_gpu_names_the_cuda_error(self, monkeypatch):
        monkeypatch.setitem(sys.modules, "cupy", _no_gpu_cupy())
        with pytest.raises(BackendUnavailable) as info:
            load_backend("cupy")
        message = str(info.value)
        assert message.startswith("no CUDA GPU visible (cudaErrorNoDevice")
        assert "\n" not in message

    @pytest.mark.parametrize("name", ["tensorflow", "", "cuda", None])
    def test_unknown_backend_is_named_with_the_choices(self, name):
        with pytest.raises(BackendUnavailable) as info:
            load_backend(name)
        message = str(info.value)
        assert message.startswith(f"unknown backend {name!r}")
        assert "numpy" in message and "cupy" in message
        assert "\n" not in message

    def test_available_backends_never_raises(self, no_cupy):
        status = backend_mod.available_backends()
        assert status["numpy"][0] is True
        assert status["cupy"] == (False, "CuPy is not installed: pip install 'graphgrade[cuda]'")

    def test_cupy_wrap_op_uses_the_cupy_implementation(self):
        b = backend_mod.CupyBackend(cuda, "test device")  # no device work here

        class Op:
            elementwise = True
            capturable = True
            __name__ = "add(1)"

            def __call__(self, x):
                raise AssertionError("the numpy implementation must not run")

            def cupy(self, x):
                return ("cupy", x)

        wrapped = b.wrap_op(Op())
        assert wrapped(5) == ("cupy", 5)
        assert wrapped.elementwise is True and wrapped.capturable is True
        assert wrapped.__name__ == "add(1)"

    def test_cupy_wrap_op_refuses_an_op_without_cupy(self):
        b = backend_mod.CupyBackend(cuda, "test device")

        def plus_one(x):
            return x + 1

        with pytest.raises(BackendUnsupported, match="'plus_one' has no CuPy implementation"):
            b.wrap_op(plus_one)


def _no_gpu_cupy():
    """A CuPy that imports but sees no device, as on a CPU-only machine."""

    def get_device_count():
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

    runtime = types.SimpleNamespace(getDeviceCount=get_device_count, is_hip=False)
    module = types.ModuleType("cupy")
    module.cuda = types.SimpleNamespace(runtime=runtime)
    return module


# ==========================================================================
# CPU: reference.cuda without CuPy
# ==========================================================================


class TestCudaModuleWithoutCupy:
    def test_modules_import_without_importing_cupy(self):
        code = (
            "import sys\n"
            "import reference.cuda, reference.bench, reference.backend\n"
            "reference.backend.load_backend('numpy')\n"
            "assert 'cupy' not in sys.modules, 'cupy was imported'\n"
        )
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr

    def test_is_available_says_cupy_is_missing(self, no_cupy):
        assert cuda.is_available() == (False, "CuPy is not installed")

    def test_is_available_reports_a_missing_gpu(self, monkeypatch):
        monkeypatch.setitem(sys.modules, "cupy", _no_gpu_cupy())
        ok, reason = cuda.is_available()
        assert ok is False
        assert reason == "no CUDA GPU is visible: cudaErrorNoDevice: no CUDA-capable device is detected"

    def test_is_available_is_a_bool_and_one_line_here(self):
        ok, text = cuda.is_available()
        assert isinstance(ok, bool) and isinstance(text, str) and text
        assert "\n" not in text

    @pytest.mark.parametrize(
        "make",
        [
            lambda: cuda.GraphRunner([]),
            lambda: cuda.PiecewiseGraphRunner([], lambda i: True),
        ],
    )
    def test_constructors_raise_cuda_unavailable(self, no_cupy, make):
        with pytest.raises(cuda.CudaUnavailable, match="^CuPy is not installed$"):
            make()

    def test_state_machine_is_the_simulations(self):
        assert cuda.LaunchCounter is sim.LaunchCounter
        assert cuda.StepMode is sim.StepMode
        assert cuda.InferenceGraphCapture is sim.InferenceGraphCapture

    def test_to_host_passes_host_values_through(self):
        x = np.ones(3)
        assert cuda.to_host(x) is x
        assert cuda.to_host(7) == 7
        assert cuda.to_host([x, (x,)])[1][0] is x

    def test_device_ops_are_built_without_cupy(self, no_cupy):
        ops = cuda.elementwise_chain(7)
        assert [op.name for op in ops] == ["add", "mul", "tanh"] * 2 + ["add"]
        assert all(op.elementwise for op in ops)
        assert cuda.host_sync_op.elementwise is False
        x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
        np.testing.assert_allclose(ops[2].numpy(ops[1].numpy(ops[0].numpy(x))), np.tanh((x + 0.25) * 0.75), rtol=1e-6)
        np.testing.assert_allclose(cuda.host_sync_op.numpy(x), x / 2.0)

    def test_fusing_device_ops_builds_one_kernel(self, no_cupy):
        ops = cuda.elementwise_chain(3) + [cuda.host_sync_op] + cuda.elementwise_chain(2)
        fused = cuda.fuse_elementwise(ops)
        assert len(fused) == 3
        first, sync, last = fused
        assert isinstance(first, cuda.DeviceOp) and first.elementwise
        assert sync is cuda.host_sync_op
        assert first.cuda_body == " ".join(op.cuda_body for op in ops[:3])
        x = np.linspace(-1, 1, 8, dtype=np.float32)
        np.testing.assert_allclose(first.numpy(x), np.tanh((x + 0.25) * 0.75), rtol=1e-6)
        assert len(last.cuda_body.split(";")) == 3  # two statements + trailing

    def test_fusing_other_ops_composes_them(self):
        def add1(x):
            return x + 1

        def dbl(x):
            return x * 2

        add1.elementwise = dbl.elementwise = True
        fused = cuda.fuse_elementwise([add1, dbl])
        assert len(fused) == 1 and fused[0].elementwise
        assert fused[0](3) == 8
        assert cuda.fuse_elementwise([add1]) == [add1]


# ==========================================================================
# CPU: benchmark
# ==========================================================================


class TestBenchmarkCpu:
    def test_cpu_rows_and_cuda_skipped(self, no_cupy):
        result = bench.run_benchmark(chain_lengths=(8, 32, 64), repeats=2, backends=("cpu", "cuda"), steps=2, warmup=1)
        assert [row["chain_length"] for row in result.rows] == [8, 32, 64]
        for row in result.rows:
            assert row["backend"] == "cpu" and row["check"] == "ok"
            assert row["eager_launches"] == row["chain_length"]
            assert row["replay_launches"] == 1
            assert row["eager_host_us"] > 0 and row["replay_host_us"] > 0
            assert row["host_ratio"] == pytest.approx(row["eager_host_us"] / row["replay_host_us"], rel=0.01)
            assert row["host_us_per_launch"] == pytest.approx(row["eager_host_us"] / row["chain_length"], rel=0.01)
            assert row["eager_gpu_us"] is None and row["gpu_ratio"] is None  # no GPU time on the simulation
        assert result.skipped == {"cuda": "CuPy is not installed"}
        assert result.all_checks_passed

    def test_default_chains_run_from_8_to_512_ops(self):
        assert bench.CHAIN_LENGTHS[0] == 8 and bench.CHAIN_LENGTHS[-1] == 512

    def test_result_is_frozen(self, no_cupy):
        result = bench.run_benchmark(chain_lengths=(3,), repeats=1, backends=("cpu",), steps=1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.rows = ()  # type: ignore[misc]

    def test_table_and_json(self, no_cupy):
        result = bench.run_benchmark(chain_lengths=(10,), repeats=1, backends="all", steps=1)
        table = bench.format_table(result)
        assert "launches e/r" in table and "(input copy)" in table and "checked against eager" in table
        assert "skipped cuda: CuPy is not installed" in table
        data = bench.to_json(result)
        assert json.loads(json.dumps(data)) == data
        assert data["rows"][0]["replay_launches"] == 1 and data["all_checks_passed"] is True
        assert data["skipped"] == {"cuda": "CuPy is not installed"}

    def test_a_replay_that_differs_from_eager_is_reported_and_not_timed(self, no_cupy, monkeypatch):
        class StaleRunner(sim.GraphRunner):
            def _replay(self, entry, x):  # forgets the new input: replays the captured one
                sim.LaunchCounter.bump(1)
                return entry.output

        monkeypatch.setattr(sim, "GraphRunner", StaleRunner)
        result = bench.run_benchmark(chain_lengths=(8,), repeats=1, backends=("cpu",), steps=1)
        (row,) = result.rows
        assert row["check"].startswith("replay output differs from eager (max abs difference")
        assert row["eager_host_us"] is None and row["host_ratio"] is None
        assert not result.all_checks_passed
        assert "check failed: cpu n=8: replay output differs" in bench.format_table(result)

    def test_only_cuda_gives_no_rows_and_a_reason(self, no_cupy):
        result = bench.run_benchmark(chain_lengths=(10,), repeats=1, backends=("cuda",))
        assert result.rows == ()
        assert "cuda" in result.skipped
        assert "(no rows)" in bench.format_table(result)

    @pytest.mark.parametrize(
        "kwargs",
        [{"backends": ("gpu",)}, {"chain_lengths": (0,)}, {"repeats": 0}, {"steps": 0}],
    )
    def test_bad_arguments(self, kwargs):
        with pytest.raises(ValueError):
            bench.run_benchmark(**kwargs)


# ==========================================================================
# GPU: real CuPy
# ==========================================================================

_GPU_OK, _GPU_WHY = cuda.is_available()
needs_gpu = pytest.mark.skipif(not _GPU_OK, reason=f"needs CuPy and a CUDA GPU: {_GPU_WHY}")


def _numpy_twins(ops):
    return [op.numpy for op in ops]


def _host_reference(ops, x):
    return sim.run_eager(_numpy_twins(ops), np.array(x, copy=True))


def _run(runner, x):
    return cuda.to_host(runner(cuda.to_device(x)))


@pytest.mark.gpu
@needs_gpu
class TestGpu:
    @pytest.mark.parametrize("n", [1, 3, 10, 50])
    @pytest.mark.parametrize("shape", [(4, 16), (8, 256), (3,)])
    @pytest.mark.parametrize("dtype", [np.float32, np.float64])
    def test_graph_runner_matches_numpy(self, n, shape, dtype):
        ops = cuda.elementwise_chain(n)
        runner = cuda.GraphRunner(ops)
        rng = np.random.default_rng(n)
        for _ in range(3):  # capture, then replays
            x = rng.standard_normal(shape).astype(dtype)
            np.testing.assert_allclose(_run(runner, x), _host_reference(ops, x), rtol=1e-5, atol=1e-6)
        assert runner.num_captured == 1 and not runner.uncapturable

    def test_replay_reads_new_data_from_the_same_buffer(self):
        ops = cuda.elementwise_chain(6)
        runner = cuda.GraphRunner(ops)
        x1 = np.full((4, 8), 0.5, dtype=np.float32)
        _run(runner, x1)
        (entry,) = runner.graphs.values()
        static, ptr = entry.static_input, entry.static_input.data.ptr
        x2 = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
        np.testing.assert_allclose(_run(runner, x2), _host_reference(ops, x2), rtol=1e-5, atol=1e-6)
        (again,) = runner.graphs.values()
        assert again is entry and entry.static_input is static
        assert static.data.ptr == ptr
        np.testing.assert_array_equal(cuda.to_host(static), x2)

    def test_one_launch_per_replay(self):
        ops = cuda.elementwise_chain(20)
        runner = cuda.GraphRunner(ops)
        x = cuda.to_device(np.ones((2, 4), dtype=np.float32))
        assert launches(lambda: runner(x)) == 20
        assert [launches(lambda: runner(x)) for _ in range(5)] == [1] * 5

    def test_padding(self):
        ops = cuda.elementwise_chain(5)
        runner = cuda.GraphRunner(ops, capture_sizes=[1, 2, 4, 8])
        rng = np.random.default_rng(1)
        for rows in (7, 8, 5, 3):  # 7, 8, 5 share the size-8 graph; 3 gets size 4
            x = rng.standard_normal((rows, 16)).astype(np.float32)
            out = _run(runner, x)
            assert out.shape == (rows, 16)
            np.testing.assert_allclose(out, _host_reference(ops, x), rtol=1e-5, atol=1e-6)
        assert runner.num_captured == 2  # sizes 8 and 4
        entry = runner.graphs[((8, 16), "float32")]
        np.testing.assert_array_equal(cuda.to_host(entry.static_input)[5:], 0)
        big = cuda.to_device(np.ones((9, 16), dtype=np.float32))
        assert launches(lambda: runner(big)) == 5
        assert runner.num_captured == 2

    def test_warmup_steps(self):
        runner = cuda.GraphRunner(cuda.elementwise_chain(4), warmup_steps=2)
        x = cuda.to_device(np.ones((2, 2), dtype=np.float32))
        assert [launches(lambda: runner(x)) for _ in range(5)] == [4, 4, 4, 1, 1]

    def test_piecewise_with_a_host_sync_in_the_middle(self):
        ops = cuda.elementwise_chain(4) + [cuda.host_sync_op] + cuda.elementwise_chain(4)
        runner = cuda.PiecewiseGraphRunner(ops, lambda i: i != 4)
        assert runner.num_graphs == 2
        rng = np.random.default_rng(2)
        for _ in range(3):
            x = (4 * rng.standard_normal((4, 32))).astype(np.float32)
            np.testing.assert_allclose(_run(runner, x), _host_reference(ops, x), rtol=1e-5, atol=1e-6)
        x = cuda.to_device(np.ones((4, 32), dtype=np.float32))
        assert launches(lambda: runner(x)) == 3  # graph, eager op, graph
        assert all(not r.uncapturable for r in runner.runners if r is not None)

    def test_failed_capture_falls_back_cleanly(self):
        import cupy

        ops = cuda.elementwise_chain(3) + [cuda.host_sync_op] + cuda.elementwise_chain(3)
        runner = cuda.GraphRunner(ops)
        rng = np.random.default_rng(3)
        for _ in range(3):
            x = (3 * rng.standard_normal((2, 64))).astype(np.float32)
            expected = _host_reference(ops, x)  # outside the count: the simulation bumps the same counter
            n = launches(lambda: np.testing.assert_allclose(_run(runner, x), expected, rtol=1e-5, atol=1e-6))
            assert n == len(ops)
        assert runner.num_captured == 0 and len(runner.uncapturable) == 1
        assert runner.stream.is_capturing() is False
        runner.stream.synchronize()
        cupy.cuda.Device().synchronize()
        healthy = cuda.GraphRunner(cuda.elementwise_chain(3), stream=runner.stream)
        x = np.ones((2, 64), dtype=np.float32)
        _run(healthy, x)
        assert healthy.num_captured == 1
        np.testing.assert_allclose(_run(healthy, x), _host_reference(healthy.ops, x), rtol=1e-5)

    def test_fused_chain_is_one_kernel_with_the_same_result(self):
        ops = cuda.elementwise_chain(9)
        (fused,) = cuda.fuse_elementwise(ops)
        x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(4, 16)
        assert launches(lambda: cuda.run_eager([fused], cuda.to_device(x))) == 1
        got = cuda.to_host(cuda.run_eager([fused], cuda.to_device(x)))
        np.testing.assert_allclose(got, _host_reference(ops, x), rtol=1e-5, atol=1e-6)

    def test_cupy_backend(self):
        b = load_backend("cupy")
        assert b.name == "cupy" and b.GraphRunner is cuda.GraphRunner
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        d = b.prepare_input(x)
        assert type(d).__module__.startswith("cupy")
        np.testing.assert_array_equal(b.to_host(d), x)
        op = b.wrap_op(cuda.elementwise_chain(1)[0])
        np.testing.assert_allclose(b.to_host(op(d)), x + 0.25)

    def test_bench_cuda_rows(self):
        result = bench.run_benchmark(chain_lengths=(8, 64), repeats=2, backends=("cuda",), steps=5)
        assert "cuda" not in result.skipped
        assert [row["chain_length"] for row in result.rows] == [8, 64]
        for row in result.rows:
            assert row["backend"] == "cuda" and row["check"] == "ok"
            assert row["eager_launches"] == row["chain_length"]
            assert row["replay_launches"] == 1
            assert row["eager_gpu_us"] > 0 and row["replay_gpu_us"] > 0
            assert row["replay_copy_host_us"] > 0

    def test_grader_ops_capture_on_the_gpu(self):
        """Every capturable op of the spec vocabulary, matmul and softmax included."""
        from support.lab_ops import ops as vocabulary

        from grader.spec_model import OpSpec

        OP_KINDS, apply_chain = vocabulary.OP_KINDS, vocabulary.apply_chain

        chain = tuple(
            OpSpec(k.name, 1.5 if k.takes == "number" else (3 if k.takes == "seed" else None))
            for k in OP_KINDS.values()
            if k.capturable
        )
        ops = [lambda x, op=op: vocabulary.apply_op(op, x) for op in chain]
        runner = cuda.GraphRunner(ops)
        x = np.random.default_rng(4).standard_normal((4, 8)).astype(np.float32)
        _run(runner, x)
        np.testing.assert_allclose(_run(runner, x * 2), apply_chain(chain, x * 2), rtol=1e-4, atol=1e-5)
        assert runner.num_captured == 1 and not runner.uncapturable

    def test_the_legacy_stream_is_refused(self):
        import cupy

        with pytest.raises(ValueError, match="legacy default stream"):
            cuda.GraphRunner(cuda.elementwise_chain(2), stream=cupy.cuda.Stream.null)
        if cuda._is_non_blocking(cupy, cupy.cuda.Stream()) is not None:  # this CuPy can tell
            with pytest.raises(ValueError, match="blocking stream"):
                cuda.GraphRunner(cuda.elementwise_chain(2), stream=cupy.cuda.Stream())
