"""The CUDA path from the command line: backend selection, the unavailable path, and `graphgrade bench`.

These run everywhere. Where CuPy and a GPU are present, the unavailable-path
tests skip and the GPU tests in test_cuda_path.py take over.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reference.cuda import is_available

GPU_PRESENT, GPU_REASON = is_available()


def graphgrade(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(GPU_PRESENT, reason="CuPy and a GPU are present: the unavailable path cannot be shown here")
def test_validate_on_cupy_without_gpu_is_one_clear_line():
    result = graphgrade("validate", "--backend", "cupy")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "cupy" in lines[0] and ("CuPy is not installed" in lines[0] or "GPU" in lines[0])
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.slow
def test_validate_on_numpy_backend_passes():
    result = graphgrade("validate", "--backend", "numpy")
    assert result.returncode == 0, result.stderr
    assert "OK on the numpy reference" in result.stdout


def test_unknown_backend_is_rejected_by_the_parser():
    result = graphgrade("validate", "--backend", "opencl")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr and "Traceback" not in result.stderr


def test_bench_cpu_table_counts_launches():
    result = graphgrade("bench", "--backend", "cpu", "--chains", "10", "50", "--repeats", "2", "--steps", "2")
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith("cpu ")]
    assert [int(r[1]) for r in rows] == [10, 50]  # ops column ("cpu N ok ...")
    assert [r[2] for r in rows] == ["ok", "ok"]  # replay checked against eager before timing
    # eager pays one launch per op, a replay exactly one: the whole point of CUDA graphs
    assert [r[-1] for r in rows] == ["10/1", "50/1"]


def test_bench_options_have_help():
    result = graphgrade("bench", "--help")
    assert result.returncode == 0
    for option in ("--json", "--backend", "--chains", "--repeats", "--steps"):
        options = result.stdout.split("options:", 1)[1]
        block = options.split(f"  {option}", 1)[1].split("\n  -", 1)[0]
        assert len(block.split()) > 2, f"{option} has no help text"


def test_bench_json_reports_the_gpu_as_skipped_with_a_reason():
    result = graphgrade("bench", "--json", "--chains", "10", "--repeats", "2", "--steps", "2")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    backends = {row["backend"] for row in data["rows"]}
    assert "cpu" in backends
    if GPU_PRESENT:
        assert "cuda" in backends
    else:
        assert "cuda" in data["skipped"] and data["skipped"]["cuda"]
        assert "cuda" not in backends


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_PRESENT, reason=f"needs CuPy and a CUDA GPU: {GPU_REASON}")
def test_validate_on_cupy_passes_the_suite():
    result = graphgrade("validate", "--backend", "cupy")
    assert result.returncode == 0, result.stderr + result.stdout


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_PRESENT, reason=f"needs CuPy and a CUDA GPU: {GPU_REASON}")
def test_bench_on_gpu_checks_and_times_each_path():
    result = graphgrade("bench", "--json", "--backend", "cuda", "--chains", "64", "--repeats", "2", "--steps", "5")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    (row,) = [r for r in data["rows"] if r["backend"] == "cuda"]
    assert row["check"] == "ok" and row["replay_launches"] == 1 and row["eager_launches"] == 64
    assert row["eager_gpu_us"] > 0 and row["replay_gpu_us"] > 0
