"""Similarity of a class: how long `graphgrade similarity` (grader.commands.similarity.compare) takes for N
submissions, against copydetect's own CopyDetector on the same files, measured in the same run.

    python benchmarks/similarity.py            # 500 submissions (the target: within 60 s on 2 cores)
    python benchmarks/similarity.py --n 200 --baseline-n 50

The class: the reference and the three correct variants (tests/correct_variants), each copy with
its local names renamed at random, its functions in a shuffled order and a comment holding its
index, so no two files are alike; one in ten is a disguised copy of another submission (what the
check is for). The student template is the boilerplate, as in a real run.

The baseline is copydetect's CopyDetector (files on disk, every ordered pair, its defaults) on
--baseline-n of the same files, extrapolated to N by the square of the ratio (its work is
pairwise). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.commands.similarity import DEFAULT_THRESHOLD, compare, default_template, submission_source  # noqa: E402

NAMES = [
    "entry",
    "result",
    "groups",
    "segments",
    "sizes",
    "fused",
    "members",
    "flags",
    "padded",
    "kind",
    "graph",
    "out",
    "buf",
    "key",
    "x",
    "y",
    "op",
    "ops",
]


def shuffled_functions(source: str, rng: random.Random) -> str:
    """Top-level blocks (def/class and what follows) in a random order, imports first."""
    blocks = re.split(r"\n(?=(?:def|class|@) )", source)
    head, rest = blocks[0], blocks[1:]
    rng.shuffle(rest)
    return "\n".join([head, *rest])


def make_class(n: int, folder: Path, seed: int = 1) -> list[Path]:
    rng = random.Random(seed)
    sources = [(ROOT / "reference" / "cudagraph.py").read_text(encoding="utf-8")]
    sources += [
        p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests" / "correct_variants").glob("*/cudagraph.py"))
    ]
    written: list[str] = []
    paths = []
    for i in range(n):
        if written and i % 10 == 9:
            base = rng.choice(written)  # a disguised copy of a classmate
        else:
            base = rng.choice(sources)
        text = base
        for name in rng.sample(NAMES, 6):
            text = re.sub(rf"\b{name}\b", f"{name}_{rng.randrange(1000)}", text)
        text = shuffled_functions(text, rng) + f"\n# submission {i}\n"
        written.append(text)
        d = folder / f"s{i:04d}"
        d.mkdir()
        (d / "cudagraph.py").write_text(text, encoding="utf-8")
        paths.append(d)
    return paths


def run_baseline(paths: list[Path], template: Path) -> float:
    os.environ.setdefault("MPLBACKEND", "Agg")
    from copydetect import CopyDetector

    started = time.monotonic()
    det = CopyDetector(
        test_dirs=[str(p) for p in paths],
        boilerplate_dirs=[str(template)],
        extensions=["py"],
        autoopen=False,
        silent=True,
    )
    det.run()
    return time.monotonic() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=500, help="submissions in the class (default: 500)")
    ap.add_argument(
        "--baseline-n",
        type=int,
        default=100,
        help="submissions CopyDetector compares, extrapolated to N (default: 100)",
    )
    ap.add_argument("--target", type=float, default=60.0, help="seconds allowed for N (default: 60)")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="graphgrade-simbench-") as tmp:
        paths = make_class(args.n, Path(tmp))
        template = default_template()
        c0, t0 = time.process_time(), time.monotonic()
        import copydetect  # noqa: F401 - the import (matplotlib with it) is counted apart

        t_import = time.monotonic() - t0
        t0 = time.monotonic()
        sources = {p.name: submission_source(p) for p in paths}
        t_read = time.monotonic() - t0
        result = compare(sources, submission_source(template), DEFAULT_THRESHOLD)
        total, cpu = t_import + t_read + result.seconds, time.process_time() - c0
        copies = args.n // 10
        print(
            f"graphgrade similarity, {args.n} submissions ({args.n * (args.n - 1) // 2} pairs): {total:.1f} s wall, {cpu:.1f} s CPU "
            f"(import {t_import:.1f} s, read {t_read:.1f} s, fingerprint and compare {result.seconds:.1f} s); "
            f"{len(result.pairs)} pairs at or above {DEFAULT_THRESHOLD} ({copies} disguised copies planted)",
            flush=True,
        )
        k = min(args.baseline_n, args.n)
        c0 = time.process_time()
        base = run_baseline(paths[:k], template)
        base_cpu = time.process_time() - c0
        projected, projected_cpu = base * (args.n / k) ** 2, base_cpu * (args.n / k) ** 2
        print(
            f"copydetect CopyDetector, {k} submissions: {base:.1f} s wall, {base_cpu:.1f} s CPU; projected to {args.n}: "
            f"{projected:.0f} s wall, {projected_cpu:.0f} s CPU",
            flush=True,
        )
        print(
            f"speed-up over the baseline (CPU): {projected_cpu / max(cpu, 1e-9):.1f}x; target {args.target:g} s for {args.n}: "
            f"{'met' if total <= args.target else 'NOT met'} in wall time under this load, "
            f"{'met' if cpu <= args.target else 'NOT met'} in CPU time"
        )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
