"""The CUDA path on the CPU, against a strict stand-in for CuPy.

``tests/support/strict_cupy`` is imported as ``cupy`` by the ``strict_cupy``
fixture (conftest.py). Its arrays are a numpy subclass whose type lives in
module ``cupy``, so the grader's ops take their CuPy path; work on a capturing
stream is recorded and runs only when the graph launches; and what CUDA and
CuPy refuse during capture is refused with their exception types and
messages. These tests check, in order: that the stand-in is strict, that the
runners of ``reference.cuda`` behave on it, that the whole shipped suite
passes ``validate --backend cupy`` through it with no eager fallback where
the numpy reference captures, and that ``bench`` checks and times on it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest
from support.lab_ops import ops as grader_ops

from grader.spec_model import OpSpec
from reference import bench, cuda
from reference import cudagraph as sim

ROOT = Path(__file__).resolve().parents[1]
STANDIN = ROOT / "tests" / "support" / "strict_cupy"
CUBLAS = "calling cuBLAS API during stream capture is currently unsupported"


def shipped_case_count() -> str:
    """ "N cases", as validate's summary counts the shipped suite."""
    from support.shipped import shipped_suite

    return f"{sum(len(spec.cases) for spec in shipped_suite().suite.specs)} cases"


def launches(fn) -> int:
    before = sim.LaunchCounter.n
    fn()
    return sim.LaunchCounter.n - before


def standin_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(STANDIN), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def graphgrade(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", *args],
        cwd=ROOT,
        env=standin_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# ==========================================================================
# The stand-in is strict
# ==========================================================================


class TestStandIn:
    def test_arrays_take_the_cupy_path_of_the_grader_ops(self, strict_cupy):
        x = strict_cupy.asarray(np.ones((2, 3), np.float32))
        assert type(x).__module__ == "cupy" and isinstance(x, strict_cupy.ndarray)
        assert grader_ops._xp(x) is strict_cupy
        assert type(grader_ops.apply_op(OpSpec("matmul", 3), x)).__module__ == "cupy"

    def test_captured_work_runs_only_when_the_graph_launches(self, strict_cupy):
        cp = strict_cupy
        stream = cp.cuda.Stream(non_blocking=True)
        x = cp.asarray(np.arange(6.0).reshape(2, 3))
        with stream:
            stream.begin_capture()
            y = cp.exp(x) * 2 + x.sum(axis=-1, keepdims=True)
            graph = stream.end_capture()
        assert np.isnan(y.get()).all()  # recorded, not run: the output is garbage
        graph.launch(stream)
        expected = np.exp(np.arange(6.0).reshape(2, 3)) * 2 + np.array([[3.0], [12.0]])
        np.testing.assert_allclose(y.get(), expected)
        x[...] = 0.0  # new input in the same buffer: the graph reads it on the next launch
        graph.launch(stream)
        np.testing.assert_allclose(y.get(), np.full((2, 3), 2.0))

    @pytest.mark.parametrize(
        ("planted", "error", "message", "invalidates"),
        [
            ("host copy: cupy.asarray(numpy)", "CUDARuntimeError", "cudaErrorCapturedEvent", False),
            ("host copy: a[...] = numpy", "CUDARuntimeError", "cudaErrorCapturedEvent", False),
            ("matmul: a @ b", "NotImplementedError", CUBLAS, False),
            ("matmul: cupy.matmul", "NotImplementedError", CUBLAS, False),
            ("matmul: a.dot(b)", "NotImplementedError", CUBLAS, False),
            ("cuSOLVER: cupy.linalg.svd", "NotImplementedError", "calling cuSOLVER API during stream capture", False),
            ("cuRAND: cupy.random.random", "NotImplementedError", "calling cuRAND API during stream capture", False),
            ("a.get()", "CUDARuntimeError", "cudaErrorStreamCaptureUnsupported", True),
            ("float(a[0, 0])", "CUDARuntimeError", "cudaErrorStreamCaptureUnsupported", True),
            ("a.item()", "CUDARuntimeError", "cudaErrorStreamCaptureUnsupported", True),
            ("stream.synchronize()", "CUDARuntimeError", "cudaErrorStreamCaptureUnsupported", True),
            ("Device().synchronize()", "CUDARuntimeError", "cudaErrorStreamCaptureUnsupported", True),
            ("event query", "CUDARuntimeError", "cudaErrorCapturedEvent", False),
        ],
    )
    def test_refuses_during_capture(self, strict_cupy, planted, error, message, invalidates):
        cp = strict_cupy
        stream = cp.cuda.Stream(non_blocking=True)
        a = cp.asarray(np.ones((3, 3), np.float32))
        actions = {
            "host copy: cupy.asarray(numpy)": lambda: cp.asarray(np.ones(3)),
            "host copy: a[...] = numpy": lambda: a.__setitem__(Ellipsis, np.zeros((3, 3), np.float32)),
            "matmul: a @ b": lambda: a @ a,
            "matmul: cupy.matmul": lambda: cp.matmul(a, a),
            "matmul: a.dot(b)": lambda: a.dot(a),
            "cuSOLVER: cupy.linalg.svd": lambda: cp.linalg.svd(a),
            "cuRAND: cupy.random.random": lambda: cp.random.random(3),
            "a.get()": lambda: a.get(),
            "float(a[0, 0])": lambda: float(a[0, 0]),
            "a.item()": lambda: a[0, 0].item(),
            "stream.synchronize()": lambda: stream.synchronize(),
            "Device().synchronize()": lambda: cp.cuda.Device().synchronize(),
            "event query": lambda: stream.record().done,
        }
        with stream:
            stream.begin_capture()
            with pytest.raises(Exception) as info:
                actions[planted]()
            assert type(info.value).__name__ == error and message in str(info.value)
            if invalidates:
                with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="cudaErrorStreamCaptureInvalidated"):
                    stream.end_capture()
            else:
                stream.end_capture()
        assert stream.is_capturing() is False
        stream.synchronize()  # usable again

    def test_the_legacy_stream_cannot_capture(self, strict_cupy):
        with pytest.raises(RuntimeError, match=r"^cannot capture on the default \(legacy\) stream$"):
            strict_cupy.cuda.Stream.null.begin_capture()

    def test_a_capturing_blocking_stream_makes_the_legacy_stream_unusable(self, strict_cupy):
        cp = strict_cupy
        blocking = cp.cuda.Stream()
        a = cp.asarray(np.ones(3))
        blocking.begin_capture()
        with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="cudaErrorStreamCaptureImplicit"):
            cp.cuda.Stream.null.is_capturing()  # a query: the capture survives it (as in CuPy's own tests)
        blocking.end_capture()
        blocking.begin_capture()
        with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="cudaErrorStreamCaptureImplicit"):
            cp.exp(a)  # work on the legacy stream would depend on the capture
        with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="cudaErrorStreamCaptureInvalidated"):
            blocking.end_capture()

    def test_host_arrays_do_not_mix_with_device_arrays(self, strict_cupy):
        with pytest.raises(TypeError, match="Unsupported type <class 'numpy.ndarray'>"):
            strict_cupy.asarray(np.ones(3)) * np.ones(3)

    def test_events_time_the_stream_outside_capture(self, strict_cupy):
        cp = strict_cupy
        begin, end = cp.cuda.Event(), cp.cuda.Event()
        begin.record()
        cp.exp(cp.asarray(np.ones(1000)))
        end.record()
        end.synchronize()
        assert cp.cuda.get_elapsed_time(begin, end) >= 0.0
        with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="cudaErrorInvalidResourceHandle"):
            cp.cuda.get_elapsed_time(cp.cuda.Event(disable_timing=True), end)


# ==========================================================================
# reference.cuda's runners on the stand-in
# ==========================================================================


def _elementwise(cp, n):
    makers = (lambda x: x + 1.0, lambda x: x * 0.5, cp.tanh)
    return [makers[i % 3] for i in range(n)]


def _host(ops, x):
    y = np.array(x, copy=True)
    for i, _ in enumerate(ops):
        y = (y + 1.0, y * 0.5, np.tanh(y))[i % 3]
    return y


class _HostSync:
    """Reads a value back mid-op, as a stray ``.item()`` in a model does."""

    def __init__(self, cp, witness=None):
        self.cp = cp
        self.witness = witness

    def __call__(self, x):
        marker = _Marker()
        if self.witness is not None:
            self.witness.append(weakref.ref(marker))
        peak = float(self.cp.abs(x).max())
        return x / max(1.0, peak)


class _Marker:
    pass


class TestRunnersOnTheStandIn:
    def test_capture_then_replay_is_one_launch_from_the_same_buffer(self, strict_cupy):
        cp = strict_cupy
        ops = _elementwise(cp, 4)
        runner = cuda.GraphRunner(ops)
        x1 = np.arange(6.0).reshape(2, 3)
        assert launches(lambda: np.testing.assert_allclose(cuda.to_host(runner(x1)), _host(ops, x1))) == 4
        (entry,) = runner.graphs.values()
        static, ptr = entry.static_input, entry.static_input.data.ptr
        x2 = cp.asarray(x1 + 10)
        assert launches(lambda: np.testing.assert_allclose(cuda.to_host(runner(x2)), _host(ops, x1 + 10))) == 1
        assert runner.graphs[((2, 3), "float64")] is entry and entry.static_input is static
        assert static.data.ptr == ptr
        assert entry.graph.launches == 2  # once at capture (to fill the output), once for the replay

    def test_shapes_dtypes_padding_and_warmup(self, strict_cupy):
        cp = strict_cupy
        runner = cuda.GraphRunner(_elementwise(cp, 3), capture_sizes=[8, 1, 2, 4], warmup_steps=1)
        rng = np.random.default_rng(1)
        seen = []
        for rows in (7, 7, 5, 3, 3):
            x = rng.standard_normal((rows, 2))
            seen.append(launches(lambda: np.testing.assert_allclose(cuda.to_host(runner(x)), _host(runner.ops, x))))
        assert seen == [3, 3, 1, 3, 3]  # warm-up, capture (size 8), replay; size 4: warm-up, capture
        assert sorted(runner.graphs) == [((4, 2), "float64"), ((8, 2), "float64")]
        np.testing.assert_array_equal(cuda.to_host(runner.graphs[((8, 2), "float64")].static_input)[5:], 0)
        runner(np.ones((2, 2), np.float32))
        runner(np.ones((2, 2), np.float32))
        assert ((2, 2), "float32") in runner.graphs
        assert launches(lambda: runner(np.ones((9, 2)))) == 3 and len(runner.graphs) == 3  # above 8: eager

    def test_a_failed_capture_falls_back_and_keeps_only_the_reason(self, strict_cupy, monkeypatch):
        cp = strict_cupy
        pools = []
        real_pool = cp.cuda.MemoryPool
        monkeypatch.setattr(cp.cuda, "MemoryPool", lambda: pools.append(real_pool()) or pools[-1])
        witness: list = []
        ops = _elementwise(cp, 2) + [_HostSync(cp, witness)] + _elementwise(cp, 2)
        runner = cuda.GraphRunner(ops)
        x = np.linspace(-3, 3, 6).reshape(2, 3)
        with cuda.recording_captures() as records:
            assert launches(lambda: cuda.to_host(runner(x))) == len(ops)
        (reason,) = runner.uncapturable.values()
        assert (
            reason
            == "CUDARuntimeError: cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing"
        )
        assert [(r.reason, r.on_purpose) for r in records] == [(reason, False)]
        assert runner.stream.is_capturing() is False
        assert all(ref() is None for ref in witness)  # no exception, traceback or frame was kept
        assert pools and all(pool.total_bytes() == 0 for pool in pools)  # the private pool was released
        assert runner.num_captured == 0 and launches(lambda: runner(x)) == len(ops)

    @pytest.mark.parametrize(
        ("planted", "message"),
        [("host copy", "cudaErrorCapturedEvent"), ("matmul", CUBLAS)],
    )
    def test_planted_host_copy_and_matmul_are_refused_in_a_runner(self, strict_cupy, planted, message):
        cp = strict_cupy
        w = cp.asarray(np.eye(3))

        def op(x):
            if planted == "host copy":
                return x + cp.asarray(np.ones(3))
            return x @ w

        runner = cuda.GraphRunner([op, cp.tanh])
        x = np.ones((2, 3))
        runner(x)
        (reason,) = runner.uncapturable.values()
        assert message in reason and runner.num_captured == 0

    def test_non_capturing_streams_are_refused_when_the_runner_is_built(self, strict_cupy):
        cp = strict_cupy
        for make in (cuda.GraphRunner, lambda ops, **kw: cuda.PiecewiseGraphRunner(ops, lambda i: True, **kw)):
            with pytest.raises(ValueError, match=r"legacy default stream \(cupy.cuda.Stream.null\) cannot capture"):
                make([cp.tanh], stream=cp.cuda.Stream.null)
            with pytest.raises(ValueError, match="a blocking stream cannot capture safely"):
                make([cp.tanh], stream=cp.cuda.Stream())
        shared = cp.cuda.Stream(non_blocking=True)
        assert cuda.GraphRunner([cp.tanh], stream=shared).stream is shared

    def test_an_op_marked_uncapturable_is_not_captured_on_purpose(self, strict_cupy):
        attention = grader_ops.GraderOp(OpSpec("attention", 5), 0, 0, grader_ops.Witness())
        runner = cuda.GraphRunner([attention, strict_cupy.tanh])
        x = np.random.default_rng(2).standard_normal((2, 6)).astype(np.float32)
        with cuda.recording_captures() as records:
            assert [launches(lambda: runner(x)) for _ in range(2)] == [2, 2]
        assert runner.num_captured == 0
        assert (
            records[0].on_purpose
            and records[0].reason == "not captured on purpose: attention(5) marked capturable = False"
        )

    def test_piecewise_runs_the_host_sync_between_graphs(self, strict_cupy):
        cp = strict_cupy
        ops = _elementwise(cp, 3) + [_HostSync(cp)] + _elementwise(cp, 3)
        runner = cuda.PiecewiseGraphRunner(ops, lambda i: i != 3, capture_sizes=[4])
        x = np.linspace(-2, 2, 6).reshape(3, 2)
        runner(x)
        y = cuda.to_host(runner(x + 1))
        expected = _host(ops[4:], (lambda h: h / max(1.0, np.abs(h).max()))(_host(ops[:3], x + 1)))
        np.testing.assert_allclose(y, expected)
        assert launches(lambda: runner(x + 1)) == 3
        assert all(not r.uncapturable for r in runner.runners if r is not None)

    def test_every_capturable_op_of_the_vocabulary_captures(self, strict_cupy):
        chain = tuple(
            OpSpec(k.name, 1.5 if k.takes == "number" else (3 if k.takes == "seed" else None))
            for k in grader_ops.OP_KINDS.values()
            if k.capturable
        )
        assert {op.name for op in chain} >= {"matmul", "softmax"}
        runner = cuda.GraphRunner(grader_ops.make_ops(chain, 0, grader_ops.Witness()))
        x = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
        runner(x)
        out = cuda.to_host(runner(x * 2))
        np.testing.assert_allclose(out, grader_ops.apply_chain(chain, x * 2), rtol=1e-5, atol=1e-6)
        assert runner.num_captured == 1 and not runner.uncapturable

    def test_matmul_weights_reach_the_device_once_and_never_inside_a_capture(self, strict_cupy):
        cp = strict_cupy
        matmul = OpSpec("matmul", 7)
        x = cp.asarray(np.ones((2, 5), np.float32))
        grader_ops.apply_op(matmul, x)
        grader_ops.apply_op(matmul, x)
        assert list(grader_ops._DEVICE_WEIGHTS) == [(7, 5, "float32", 0)]
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            stream.begin_capture()
            with pytest.raises(RuntimeError, match=r"weights of matmul\(9\) for n=5 float32 are not on the device yet"):
                grader_ops.apply_op(OpSpec("matmul", 9), x)
            grader_ops.apply_op(matmul, x)  # cached: captures
            stream.end_capture()


# ==========================================================================
# The whole shipped suite through the CUDA reference
# ==========================================================================


def _count_captures(monkeypatch, module, succeeded) -> dict:
    """uid -> graphs captured by ``module``'s runners while that case was validated."""
    import grader.commands.validate as validate

    counts: dict = {}
    current = {"uid": None}
    observe = validate.observe_in_process

    def observing(chosen, uid, *args, **kwargs):
        current["uid"] = uid
        counts.setdefault(uid, 0)
        return observe(chosen, uid, *args, **kwargs)

    capture = module.GraphRunner._capture

    def capturing(self, *args, **kwargs):
        before = len(self.graphs)
        result = capture(self, *args, **kwargs)
        if succeeded(self, before):
            counts[current["uid"]] += 1
        return result

    monkeypatch.setattr(validate, "observe_in_process", observing)
    monkeypatch.setattr(module.GraphRunner, "_capture", capturing)
    return counts


class TestSuiteOnTheCudaReference:
    @pytest.mark.slow
    def test_every_case_passes_and_nothing_falls_back_where_numpy_captures(self, strict_cupy, monkeypatch):
        from grader.commands.validate import validate_suite

        specs = ROOT / "specs"
        with monkeypatch.context() as patch:
            numpy_counts = _count_captures(patch, sim, lambda runner, before: True)
            problems, _ = validate_suite(specs, backend="numpy")
            assert problems == []
        cupy_counts = _count_captures(monkeypatch, cuda, lambda runner, before: len(runner.graphs) > before)
        notes: list[str] = []
        with cuda.recording_captures() as records:
            problems, summary = validate_suite(specs, backend="cupy", notes=notes)
        assert problems == [], "\n".join(problems)
        assert shipped_case_count() in summary and "OK on the cupy reference" in summary
        assert records == [] and notes == []  # no key ran eagerly, on purpose or not
        assert sum(numpy_counts.values()) > 50
        assert cupy_counts == numpy_counts  # every graph the simulation captures, CUDA captures

    @pytest.mark.slow
    def test_validate_on_the_command_line(self):
        result = graphgrade("validate", "--backend", "cupy")
        assert result.returncode == 0, result.stderr[-2000:]
        assert shipped_case_count() in result.stdout and "OK on the cupy reference" in result.stdout

    @pytest.mark.parametrize(
        ("planted", "message"),
        [("matmul through cuBLAS", CUBLAS), ("weights copied from the host in every call", "cudaErrorCapturedEvent")],
    )
    def test_planted_bugs_are_errors_that_say_why(self, strict_cupy, monkeypatch, planted, message):
        from grader.commands.validate import validate_suite

        cp = strict_cupy

        def apply(x, seed):  # the oracle still computes on numpy; only the CuPy path is planted
            host = grader_ops._host_weights(seed, x.shape[-1], x.dtype)
            if grader_ops._xp(x) is np:
                return x @ host
            if planted == "matmul through cuBLAS":
                return x @ grader_ops._device_weights(cp, seed, x.shape[-1], x.dtype)
            return (x[..., :, None] * cp.asarray(host)).sum(axis=-2)

        kind = grader_ops.OP_KINDS["matmul"]
        monkeypatch.setitem(grader_ops.OP_KINDS, "matmul", dataclasses.replace(kind, apply=apply))
        problems, _ = validate_suite(ROOT / "specs", backend="cupy")
        refused = [p for p in problems if "could not capture ops marked capturable" in p]
        assert len(refused) >= 10 and all(message in p for p in refused)
        assert refused[0].startswith(str(ROOT / "specs")) and ".yaml:" in refused[0]

    def test_a_key_declined_on_purpose_is_explained(self, strict_cupy, monkeypatch):
        """Were matmul marked uncapturable, runners holding one would run eagerly, and validate says why."""
        from grader.commands.validate import validate_suite

        kind = grader_ops.OP_KINDS["matmul"]
        monkeypatch.setitem(grader_ops.OP_KINDS, "matmul", dataclasses.replace(kind, capturable=False))
        notes: list[str] = []
        problems, _ = validate_suite(ROOT / "specs", backend="cupy", notes=notes)
        assert notes and all("runs eagerly on cupy: not captured on purpose: matmul(" in n for n in notes)
        assert (
            "specs/03_shape_cache.yaml:72: shape-cache-basics/interleaved-shapes: matmul(3), tanh, softmax for key ((4, 8)"
            in notes[0]
        )
        assert not any("could not capture" in p for p in problems)  # declined, not failed


# ==========================================================================
# bench on the stand-in
# ==========================================================================


class TestBenchOnTheStandIn:
    def test_cuda_rows_are_checked_then_timed_with_events(self, strict_cupy):
        result = bench.run_benchmark(chain_lengths=(8, 16), repeats=1, backends=("cuda",), steps=2, warmup=1)
        assert result.skipped == {}
        for row in result.rows:
            assert row["backend"] == "cuda" and row["device"] == "strict CuPy stand-in (CPU)"
            assert row["check"] == "ok"
            assert (row["eager_launches"], row["replay_launches"]) == (row["chain_length"], 1)
            for key in ("eager_host_us", "replay_host_us", "replay_copy_host_us", "eager_gpu_us", "replay_gpu_us"):
                assert row[key] > 0, key
            assert row["gpu_ratio"] == pytest.approx(row["eager_gpu_us"] / row["replay_gpu_us"], rel=0.01)

    def test_a_graph_that_replays_stale_input_fails_the_check(self, strict_cupy, monkeypatch):
        def stale_replay(self, entry, x):  # forgets to copy the new input into the static buffer
            entry.graph.launch(self.stream)
            sim.LaunchCounter.bump(1)
            return entry.output

        monkeypatch.setattr(cuda.GraphRunner, "_replay", stale_replay)
        result = bench.run_benchmark(chain_lengths=(8,), repeats=1, backends=("cuda",), steps=1, warmup=1)
        (row,) = result.rows
        assert row["check"].startswith("replay output differs from eager (max abs difference")
        assert row["eager_host_us"] is None and not result.all_checks_passed

    def test_bench_json_on_the_command_line(self):
        result = graphgrade("bench", "--json", "--backend", "cuda", "--chains", "8", "--repeats", "1", "--steps", "2")
        assert result.returncode == 0, result.stderr
        data = json.loads(result.stdout)
        assert data["all_checks_passed"] is True
        assert [row["chain_length"] for row in data["rows"]] == [8]


# ==========================================================================
# scripts/gpu-check, on the CPU
# ==========================================================================


def gpu_check(tmp_path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "out"
    environment = {**os.environ, "OUT": str(out), "PYTHON": sys.executable, **env}
    done = subprocess.run(
        [str(ROOT / "scripts" / "gpu-check"), *args],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1500,
    )  # a dry run's budget is 4 x 300 s
    return done, json.loads((out / "gpu-check.json").read_text())


class TestGpuCheckScript:
    def test_is_executable(self):
        assert os.access(ROOT / "scripts" / "gpu-check", os.X_OK)

    @pytest.mark.slow
    def test_dry_run_runs_every_step_on_the_stand_in_and_writes_its_result(self, tmp_path):
        done, result = gpu_check(tmp_path, "--dry-run")
        assert done.returncode == 0, done.stdout + done.stderr
        statuses = {s["step"]: s["status"] for s in result["steps"]}
        assert statuses == {"setup": "skipped", "probe": "ok", "gpu-tests": "ok", "validate": "ok", "bench": "ok"}
        notes = {s["step"]: s["note"] for s in result["steps"]}
        assert " passed" in notes["gpu-tests"] and "failed" not in notes["gpu-tests"]
        assert shipped_case_count() in notes["validate"] and "OK on the cupy reference" in notes["validate"]
        assert result["dry_run"] is True and result["passed"] is True
        assert result["device"] == "strict CuPy stand-in (CPU)"
        assert result["bench"]["all_checks_passed"] is True
        assert [r["chain_length"] for r in result["bench"]["rows"]] == [8, 64]
        summary = (tmp_path / "out" / "summary.txt").read_text()
        assert "result: PASSED" in summary and "replay at least 5x faster" in summary

    def test_uses_what_is_installed_and_fails_a_step_it_had_no_time_for(self, tmp_path):
        done, result = gpu_check(tmp_path, GPU_CHECK_BUDGET="1", PYTHONPATH=str(STANDIN))
        assert done.returncode == 1
        steps = {s["step"]: s for s in result["steps"]}
        assert steps["setup"]["status"] == "ok"  # cupy importable: no pip
        setup_log = (tmp_path / "out" / "setup.log").read_text()
        assert "everything needed is installed" in setup_log and "pip" not in setup_log
        assert {steps[n]["status"] for n in ("probe", "gpu-tests", "validate", "bench")} == {"out-of-time"}
        assert result["passed"] is False
