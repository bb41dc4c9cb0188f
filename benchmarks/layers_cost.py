"""What a change to the grader costs a cold grading: two checkouts, the same submissions, in one run.

    git archive <older commit> | tar -x -C /tmp/before
    python benchmarks/layers_cost.py --before /tmp/before            # this checkout is "after"
    python benchmarks/layers_cost.py --before /tmp/before --rounds 5

Each round grades the same submissions cold (``graphgrade grade --no-cache --no-similarity --jobs 2``,
the full suite, the default ``--isolation module``) once with each checkout's grader, in turns
(before, after, after, before, ...), so that both meet the same load; it measures the wall time
and the CPU time of the whole grading tree (the grader, its zygote, workers, report writers and
any process it starts, such as the scan's). The submissions are the tests' own: the correct
variants, a split-helpers solution, and the hostile suite's honest and buggy cores. Prints the
median of each and the ratio; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
AFTER = HERE.parent


def submissions(tmp: Path) -> list[Path]:
    sys.path.insert(0, str(AFTER / "tests" / "hostile"))
    from materialize import materialize

    made = materialize(tmp / "hostile", [])
    variants = sorted((AFTER / "tests" / "correct_variants").iterdir())
    return [*variants, AFTER / "tests" / "support" / "solutions" / "split_helpers", made["honest"], made["buggy"]]


def grade(root: Path, subs: list[Path], out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the whole tree) of one cold grading with ``root``'s grader."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(root)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "grade", *map(str, subs), "--out", str(out)]
        + ["--specs", str(root / "specs"), "--no-cache", "--no-similarity", "--jobs", "2"],
        cwd=out.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
    )
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    roots = {"before": args.before.resolve(), "after": AFTER}
    figures: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="graphgrade-layers-") as tmp:
        subs = submissions(Path(tmp))
        for i in range(args.rounds):
            order = ("before", "after") if i % 2 == 0 else ("after", "before")
            for name in order:
                out = Path(tmp) / f"out-{name}-{i}"
                figures[name].append(grade(roots[name], subs, out))
                print(f"round {i + 1} {name:<6} wall {figures[name][-1][0]:6.2f} s  CPU {figures[name][-1][1]:6.2f} s")
    median = {n: (statistics.median(w for w, _ in f), statistics.median(c for _, c in f)) for n, f in figures.items()}
    print(f"{len(subs)} submissions, {args.rounds} rounds, medians:")
    for name, (wall, cpu) in median.items():
        print(f"  {name:<6} wall {wall:6.2f} s  CPU {cpu:6.2f} s")
    print(
        f"  after/before: wall {median['after'][0] / median['before'][0]:.3f}x, "
        f"CPU {median['after'][1] / median['before'][1]:.3f}x"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
