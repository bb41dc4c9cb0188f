"""Eager execution versus graph replay, per decode-like step.

For each chain of ``n`` small elementwise ops this measures one "step"
(applying the whole chain to a small batch) two ways:

- eager: ``run_eager(ops, x)``, one launch per op;
- replay: a ``GraphRunner`` that has already captured the chain, one launch.

and reports microseconds per step (median over ``repeats`` samples, each the
mean of ``steps`` consecutive steps, after warm-up), launches per step (the
``LaunchCounter`` delta of one step) and the speedup ``eager_us / replay_us``.

Backends: "cpu" is the numpy simulation. Its replay still runs every op in
Python (that is how it models a graph), so its speedup stays near 1: there the
launch count is the result. "cuda" runs real CUDA graphs through
``reference.cuda``; its timings include synchronising the stream around each
timed region. Where CUDA cannot run, its rows are left out and
``BenchResult.skipped`` says why.

Importing this module is cheap: numpy and the standard library only.
"""
from __future__ import annotations

import dataclasses
import statistics
import time
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["BACKENDS", "BenchResult", "format_table", "run_benchmark", "to_json"]

BACKENDS: tuple[str, ...] = ("cpu", "cuda")
SHAPE: tuple[int, int] = (8, 256)
COLUMNS: tuple[str, ...] = (
    "backend",
    "device",
    "chain_length",
    "eager_us",
    "replay_us",
    "speedup",
    "eager_launches",
    "replay_launches",
)


@dataclasses.dataclass(frozen=True)
class BenchResult:
    """What ``run_benchmark`` measured.

    ``rows``: one dict per (backend, chain length) with the keys in
    ``COLUMNS``. ``skipped``: backend -> the one-line reason it was not run.
    """

    rows: tuple[dict, ...]
    skipped: dict[str, str]
    shape: tuple[int, ...] = SHAPE
    repeats: int = 0
    steps: int = 0


def _launches(step: Callable[[], Any], counter) -> int:
    before = counter.n
    step()
    return counter.n - before


def _median_us(step: Callable[[], Any], repeats: int, steps: int, sync: Callable[[], None]) -> float:
    samples = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter_ns()
        for _ in range(steps):
            step()
        sync()
        samples.append((time.perf_counter_ns() - start) / steps / 1000.0)
    return statistics.median(samples)


def _measure(eager, replay, counter, repeats, steps, warmup, sync) -> dict:
    # The first replay() captures; warm-up also compiles kernels and fills caches.
    for _ in range(max(1, warmup)):
        eager()
        replay()
    eager_launches = _launches(eager, counter)
    replay_launches = _launches(replay, counter)
    eager_us = _median_us(eager, repeats, steps, sync)
    replay_us = _median_us(replay, repeats, steps, sync)
    return {
        "eager_us": round(eager_us, 3),
        "replay_us": round(replay_us, 3),
        "speedup": round(eager_us / replay_us, 3) if replay_us > 0 else float("inf"),
        "eager_launches": eager_launches,
        "replay_launches": replay_launches,
    }


def _numpy_chain(n: int) -> list:
    """The CPU twin of ``reference.cuda.elementwise_chain``: the same maths."""
    from reference.cuda import elementwise_chain

    return [op.numpy for op in elementwise_chain(n)]


def _bench_cpu(lengths, repeats, steps, warmup) -> list[dict]:
    from reference import cudagraph as sim

    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    rows = []
    for n in lengths:
        ops = _numpy_chain(n)
        runner = sim.GraphRunner(ops)
        row = {"backend": "cpu", "device": "numpy simulation", "chain_length": n}
        row.update(
            _measure(
                lambda: sim.run_eager(ops, x),
                lambda: runner(x),
                sim.LaunchCounter,
                repeats,
                steps,
                warmup,
                lambda: None,
            )
        )
        rows.append(row)
    return rows


def _bench_cuda(lengths, repeats, steps, warmup) -> list[dict]:
    from reference import cuda

    import cupy

    rng = np.random.default_rng(0)
    x = cuda.to_device(rng.standard_normal(SHAPE).astype(np.float32))
    cupy.cuda.Device().synchronize()  # x is on the device before any timing
    device = cuda.is_available()[1]
    stream = cupy.cuda.Stream(non_blocking=True)
    rows = []
    for n in lengths:
        ops = cuda.elementwise_chain(n)
        runner = cuda.GraphRunner(ops, stream=stream)
        row = {"backend": "cuda", "device": device, "chain_length": n}
        # Both paths run on the same stream, so the replay pays no cross-stream
        # event waits and the comparison is launches versus one graph launch.
        with stream:
            row.update(
                _measure(
                    lambda: cuda.run_eager(ops, x),
                    lambda: runner(x),
                    cuda.LaunchCounter,
                    repeats,
                    steps,
                    warmup,
                    stream.synchronize,
                )
            )
        if runner.uncapturable:
            row["note"] = "capture failed: " + "; ".join(runner.uncapturable.values())
        rows.append(row)
    stream.synchronize()
    return rows


def _check_positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def run_benchmark(
    chain_lengths: Sequence[int] = (10, 50, 200),
    repeats: int = 5,
    backends: Sequence[str] = BACKENDS,
    *,
    steps: int = 20,
    warmup: int = 3,
) -> BenchResult:
    """Measure eager versus replay for each chain length on each backend.

    ``backends`` is a subset of ``("cpu", "cuda")`` (``"all"`` means both).
    Raises ``ValueError`` for an unknown backend or a non-positive count.
    """
    if isinstance(backends, str):
        backends = BACKENDS if backends == "all" else (backends,)
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        raise ValueError(
            f"unknown benchmark backend {unknown[0]!r}: choose from {', '.join(BACKENDS)} or all"
        )
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


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def format_table(result: BenchResult) -> str:
    """A plain-text table of ``result``, then any skipped backends."""
    headers = ("backend", "device", "ops", "eager us/step", "replay us/step",
               "speedup", "launches eager", "launches replay")
    keys = ("backend", "device", "chain_length", "eager_us", "replay_us",
            "speedup", "eager_launches", "replay_launches")
    body = [[_fmt(row.get(k, "")) for k in keys] for row in result.rows]
    for row in body:
        row[5] = row[5] + "x"
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h)
              for i, h in enumerate(headers)]
    right = {2, 3, 4, 5, 6, 7}

    def line(cells):
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [
        f"eager vs graph replay, one step = the whole op chain on a "
        f"{'x'.join(map(str, result.shape))} float32 batch "
        f"(median of {result.repeats} x {result.steps} steps)",
        line(headers),
        line(["-" * w for w in widths]),
    ]
    out.extend(line(r) for r in body)
    if not body:
        out.append("(no rows)")
    for row in result.rows:
        if row.get("note"):
            out.append(f"note: {row['backend']} n={row['chain_length']}: {row['note']}")
    if any(row["backend"] == "cpu" for row in result.rows):
        out.append("cpu: the simulation recomputes every op on replay; "
                   "the launch counts are its result, not the times.")
    for backend, reason in result.skipped.items():
        out.append(f"skipped {backend}: {reason}")
    return "\n".join(out)


def to_json(result: BenchResult) -> dict:
    """``result`` as plain JSON-ready data."""
    return {
        "shape": list(result.shape),
        "dtype": "float32",
        "repeats": result.repeats,
        "steps": result.steps,
        "rows": [dict(row) for row in result.rows],
        "skipped": dict(result.skipped),
    }
