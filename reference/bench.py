"""Eager execution versus graph replay, per decode-like step.

For each chain of ``n`` tiny elementwise ops (default 8 to 512) one "step"
applies the whole chain to a small batch, two ways:

- eager: ``run_eager(ops, x)``, one launch per op;
- replay: a ``GraphRunner`` that has already captured the chain: the input is
  copied into the graph's static buffer (one device copy, labelled
  ``input copy`` below), then one graph launch.

Before anything is timed, the replay's output is checked against the eager
output once, on an input other than the one captured (a broken graph, or one
that ignores its new input, must not show up as a speed-up); a length whose
check fails is reported with the reason and not timed.

Per step, for each path (median over ``repeats`` samples of ``steps`` steps):

- ``host``: how long the Python call takes to return, i.e. the CPU time to
  enqueue the work (no synchronisation inside the timed loop);
- ``gpu`` (cuda only): the stream's elapsed time between two CUDA events
  around the same loop, i.e. when the device finished the work;
- the ratios ``eager / replay`` of each, and ``host_us_per_launch``: the eager
  host time divided by its launches, the CPU cost of one launch it implies.
  ``replay_copy_host_us`` is the host time of the replay's input copy alone.

Backends: "cpu" is the numpy simulation. Its replay still runs every op in
Python (that is how it models a graph), so its ratios stay near 1: there the
launch count is the result. "cuda" runs real CUDA graphs through
``reference.cuda``. Where CUDA cannot run, its rows are left out and
``BenchResult.skipped`` says why.

Importing this module is cheap: numpy and the standard library only.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["BACKENDS", "CHAIN_LENGTHS", "BenchResult", "format_table", "run_benchmark", "to_json"]

BACKENDS: tuple[str, ...] = ("cpu", "cuda")
CHAIN_LENGTHS: tuple[int, ...] = (8, 16, 32, 64, 128, 256, 512)
SHAPE: tuple[int, int] = (8, 256)
COLUMNS: tuple[str, ...] = (
    "backend",
    "device",
    "chain_length",
    "check",
    "eager_launches",
    "replay_launches",
    "eager_host_us",
    "replay_host_us",
    "replay_copy_host_us",
    "host_ratio",
    "eager_gpu_us",
    "replay_gpu_us",
    "gpu_ratio",
    "host_us_per_launch",
)


@dataclasses.dataclass(frozen=True)
class BenchResult:
    """What ``run_benchmark`` measured.

    ``rows``: one dict per (backend, chain length) with the keys in
    ``COLUMNS`` (timings are None where not measured: the gpu columns on the
    cpu backend, every timing when ``check`` is not "ok"). ``skipped``:
    backend -> the one-line reason it was not run.
    """

    rows: tuple[dict, ...]
    skipped: dict[str, str]
    shape: tuple[int, ...] = SHAPE
    repeats: int = 0
    steps: int = 0

    @property
    def all_checks_passed(self) -> bool:
        return all(row["check"] == "ok" for row in self.rows)


class _Clock:
    """Times a loop of steps: host time always, GPU time with CUDA events."""

    def __init__(self, stream=None, cupy=None) -> None:
        self.stream = stream
        self.cupy = cupy

    def sample(self, step: Callable[[], Any], steps: int) -> tuple[float, float | None]:
        if self.cupy is None:
            start = time.perf_counter_ns()
            for _ in range(steps):
                step()
            return (time.perf_counter_ns() - start) / steps / 1000.0, None
        cuda = self.cupy.cuda
        begin, end = cuda.Event(), cuda.Event()
        self.stream.synchronize()
        begin.record(self.stream)
        start = time.perf_counter_ns()
        for _ in range(steps):
            step()
        host = (time.perf_counter_ns() - start) / steps / 1000.0
        end.record(self.stream)
        end.synchronize()
        return host, cuda.get_elapsed_time(begin, end) * 1000.0 / steps


def _median(clock: _Clock, step, repeats: int, steps: int) -> tuple[float, float | None]:
    samples = [clock.sample(step, steps) for _ in range(repeats)]
    host = statistics.median(s[0] for s in samples)
    gpu = None if samples[0][1] is None else statistics.median(s[1] for s in samples)
    return host, gpu


def _launches(step: Callable[[], Any], counter) -> int:
    before = counter.n
    step()
    return counter.n - before


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    return float(f"{a / b:.4g}") if b > 0 else float("inf")  # 4 significant digits, however small


def _check(eager_out, replay_out) -> str:
    """ "ok" when the replay computed what eager execution computed, else why not."""
    eager_out, replay_out = np.asarray(eager_out), np.asarray(replay_out)
    if eager_out.shape != replay_out.shape:
        return f"replay output has shape {list(replay_out.shape)}, eager {list(eager_out.shape)}"
    if not np.allclose(replay_out, eager_out, rtol=1e-5, atol=1e-6):
        worst = float(np.max(np.abs(replay_out.astype(np.float64) - eager_out)))
        return f"replay output differs from eager (max abs difference {worst:.3g})"
    return "ok"


def _measure(n, eager_of, replay_of, inputs, copy, to_host, counter, clock, repeats, steps, warmup) -> dict:
    """``eager_of(x)`` / ``replay_of(x)`` run one step on ``x``. The graph is
    captured with ``inputs[0]`` and checked on ``inputs[1]``: a replay that
    ignored its new input, or launched nothing, shows there."""
    x, other = inputs
    replay_of(x)  # the first call captures
    check = _check(to_host(eager_of(other)), to_host(replay_of(other)))
    row: dict = {"chain_length": n, "check": check}
    row.update(dict.fromkeys(COLUMNS[4:]))
    if check != "ok":
        return row

    def eager():
        return eager_of(x)

    def replay():
        return replay_of(x)

    for _ in range(max(1, warmup)):
        eager()
        replay()
    row["eager_launches"] = _launches(eager, counter)
    row["replay_launches"] = _launches(replay, counter)
    eager_host, eager_gpu = _median(clock, eager, repeats, steps)
    replay_host, replay_gpu = _median(clock, replay, repeats, steps)
    row.update(
        eager_host_us=round(eager_host, 3),
        replay_host_us=round(replay_host, 3),
        host_ratio=_ratio(eager_host, replay_host),
        eager_gpu_us=None if eager_gpu is None else round(eager_gpu, 3),
        replay_gpu_us=None if replay_gpu is None else round(replay_gpu, 3),
        gpu_ratio=_ratio(eager_gpu, replay_gpu),
        host_us_per_launch=round(eager_host / max(1, row["eager_launches"]), 3),
    )
    if copy is not None:
        row["replay_copy_host_us"] = round(_median(clock, copy, repeats, steps)[0], 3)
    return row


def _numpy_chain(n: int) -> list:
    """The CPU twin of ``reference.device_ops.elementwise_chain``: the same maths."""
    from reference.device_ops import elementwise_chain

    return [op.numpy for op in elementwise_chain(n)]


def _bench_cpu(lengths, repeats, steps, warmup) -> list[dict]:
    from reference import cudagraph as sim

    rng = np.random.default_rng(0)
    inputs = tuple(rng.standard_normal(SHAPE).astype(np.float32) for _ in range(2))
    rows = []
    for n in lengths:
        ops = _numpy_chain(n)
        runner = sim.GraphRunner(ops)
        row = {"backend": "cpu", "device": "numpy simulation"}
        row.update(
            _measure(
                n,
                lambda v, ops=ops: sim.run_eager(ops, v),
                runner,
                inputs,
                None,
                lambda v: v,
                sim.LaunchCounter,
                _Clock(),
                repeats,
                steps,
                warmup,
            )
        )
        rows.append(row)
    return rows


def _bench_cuda(lengths, repeats, steps, warmup) -> list[dict]:
    import cupy

    from reference import cuda

    rng = np.random.default_rng(0)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        inputs = tuple(cuda.to_device(rng.standard_normal(SHAPE).astype(np.float32)) for _ in range(2))
    stream.synchronize()  # the inputs are on the device before any timing
    x = inputs[0]
    device = cuda.is_available()[1]
    clock = _Clock(stream, cupy)
    rows = []
    for n in lengths:
        ops = cuda.elementwise_chain(n)
        runner = cuda.GraphRunner(ops, stream=stream)
        row = {"backend": "cuda", "device": device}

        def copy(runner=runner):  # the replay's input copy alone, into its static buffer
            for entry in runner.graphs.values():
                entry.static_input[...] = x

        # Both paths run on the same stream, so the replay pays no cross-stream
        # event waits and the comparison is launches versus one graph launch.
        with stream:
            row.update(
                _measure(
                    n,
                    lambda v, ops=ops: cuda.run_eager(ops, v),
                    runner,
                    inputs,
                    copy,
                    cuda.to_host,
                    cuda.LaunchCounter,
                    clock,
                    repeats,
                    steps,
                    warmup,
                )
            )
        if runner.uncapturable:
            row["check"] = "capture failed: " + "; ".join(runner.uncapturable.values())
            for key in COLUMNS[4:]:
                row[key] = None
        rows.append(row)
    stream.synchronize()
    return rows


def _check_positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def run_benchmark(
    chain_lengths: Sequence[int] = CHAIN_LENGTHS,
    repeats: int = 5,
    backends: Sequence[str] = BACKENDS,
    *,
    steps: int = 20,
    warmup: int = 3,
) -> BenchResult:
    """Check, then measure, eager versus replay for each chain length on each backend.

    ``backends`` is a subset of ``("cpu", "cuda")`` (``"all"`` means both).
    Raises ``ValueError`` for an unknown backend or a non-positive count.
    """
    if isinstance(backends, str):
        backends = BACKENDS if backends == "all" else (backends,)
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        raise ValueError(f"unknown benchmark backend {unknown[0]!r}: choose from {', '.join(BACKENDS)} or all")
    lengths = tuple(_check_positive("chain length", n) for n in chain_lengths)
    repeats = _check_positive("repeats", repeats)
    steps = _check_positive("steps", steps)
    warmup = _check_positive("warmup", warmup)

    rows: list[dict] = []
    skipped: dict[str, str] = {}
    for backend in dict.fromkeys(backends):  # keep order, drop duplicates
        if backend == "cpu":
            rows.extend(_bench_cpu(lengths, repeats, steps, warmup))
        else:
            from reference import cuda

            ok, reason = cuda.is_available()
            if not ok:
                skipped["cuda"] = reason
                continue
            rows.extend(_bench_cuda(lengths, repeats, steps, warmup))
    return BenchResult(tuple(rows), skipped, SHAPE, repeats, steps)


def _fmt(value: Any, suffix: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}{suffix}"
    return f"{value}{suffix}"


def format_table(result: BenchResult) -> str:
    """A plain-text table of ``result``, then failed checks and skipped backends."""
    headers = (
        "backend",
        "ops",
        "check",
        "eager host",
        "replay host",
        "(input copy)",
        "host x",
        "eager gpu",
        "replay gpu",
        "gpu x",
        "host/launch",
        "launches e/r",
    )
    body = []
    for row in result.rows:
        launches = "-" if row["eager_launches"] is None else f"{row['eager_launches']}/{row['replay_launches']}"
        body.append(
            [
                row["backend"],
                str(row["chain_length"]),
                "ok" if row["check"] == "ok" else "FAILED",
                _fmt(row["eager_host_us"]),
                _fmt(row["replay_host_us"]),
                _fmt(row["replay_copy_host_us"]),
                _fmt(row["host_ratio"], "x"),
                _fmt(row["eager_gpu_us"]),
                _fmt(row["replay_gpu_us"]),
                _fmt(row["gpu_ratio"], "x"),
                _fmt(row["host_us_per_launch"]),
                launches,
            ]
        )
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    devices = dict.fromkeys(f"{row['backend']}: {row['device']}" for row in result.rows)
    out = [
        f"eager vs graph replay, one step = the whole op chain on a "
        f"{'x'.join(map(str, result.shape))} float32 batch; microseconds per step "
        f"(median of {result.repeats} x {result.steps} steps); replay output checked against eager first",
        "host = time to enqueue (the call returns); gpu = CUDA-event time on the stream; "
        "replay = input copy + one graph launch; host/launch = eager host / launches",
        *(f"device {d}" for d in devices),
        line(headers),
        line(["-" * w for w in widths]),
    ]
    out.extend(line(r) for r in body)
    if not body:
        out.append("(no rows)")
    for row in result.rows:
        if row["check"] != "ok":
            out.append(f"check failed: {row['backend']} n={row['chain_length']}: {row['check']}")
    if any(row["backend"] == "cpu" for row in result.rows):
        out.append(
            "cpu: the simulation recomputes every op on replay; the launch counts are its result, not the times."
        )
    for backend, reason in result.skipped.items():
        out.append(f"skipped {backend}: {reason}")
    return "\n".join(out)


def to_json(result: BenchResult) -> dict:
    """``result`` as plain JSON-ready data (times in microseconds per step)."""
    return {
        "format": 2,
        "shape": list(result.shape),
        "dtype": "float32",
        "unit": "microseconds per step",
        "repeats": result.repeats,
        "steps": result.steps,
        "all_checks_passed": result.all_checks_passed,
        "rows": [dict(row) for row in result.rows],
        "skipped": dict(result.skipped),
    }
