"""What grading in isolation costs per submission and per case, and the cold ratio it allows.

    python benchmarks/isolation_cost.py              # 16 copies of the reference, 4 for the baseline
    python benchmarks/isolation_cost.py --k 24 --sample 6

Issue 35 asks for a cold grading at least 6x the hand-written pytest baseline's throughput and
within 1.5x of the in-process floor's CPU per case, with every defence on. Both targets bound
how much isolation may cost. This benchmark measures that cost in two parts, on copies of the
reference (every case passes but the notebook answers', so no copy is re-run traced):

1. **the fixed cost of a submission**: grading K copies with one small spec
   (``specs/01_launch_counter.yaml``) against grading one copy, with the same command. The
   difference divided by K-1 is what one more submission costs: its sandboxed worker (forked
   from the zygote, its namespaces, cgroup, Landlock and seccomp, the submission imported),
   its integrity scan's process, the PID namespace's init, its report files. The in-process
   floor of that spec's cases is taken out;
2. **the per-case overhead**: grading the K copies with the whole suite, less the fixed cost
   and the floor of every case, divided by the cases.

From them it prints the most the cold ratio could be if the per-case overhead were zero (the
baseline's CPU per submission over the floor of a submission's cases plus the fixed cost),
and what the 6x target leaves for isolation per case. It prints figures; it asserts nothing.
Each grading is run twice and the lower CPU kept (load on a shared machine only adds).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import (  # noqa: E402
    REFERENCE,
    ROOT,
    TARGET_RATIO,
    children_cpu,
    compile_grader,
    floor,
    run_baseline,
)

SMALL_SPEC = ROOT / "specs" / "01_launch_counter.yaml"


def _copies(folder: Path, k: int) -> list[Path]:
    source = REFERENCE.read_text(encoding="utf-8")
    paths = []
    for i in range(k):
        sub = folder / f"student{i:03d}"
        sub.mkdir(parents=True)
        (sub / "cudagraph.py").write_text(source + f"\n# copy {i}\n", encoding="utf-8")
        paths.append(sub)
    return paths


def _grade_cpu(paths: list[Path], specs: Path, out: Path, jobs: int) -> float:
    """The lower CPU (user+sys of the whole process tree) of two cold gradings, no cache."""
    best = float("inf")
    for _ in range(2):
        shutil.rmtree(out, ignore_errors=True)
        cmd = [sys.executable, "-m", "grader.commands.cli", "grade", *map(str, paths), "--specs", str(specs)]
        cmd += ["--out", str(out), "--jobs", str(jobs), "--no-cache", "--no-similarity"]
        before = children_cpu()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):
            raise SystemExit(f"benchmark: grading exited {done.returncode}: {done.stderr[-800:]}")
        best = min(best, children_cpu() - before)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=16, help="copies of the reference graded (default 16)")
    parser.add_argument("--sample", type=int, default=4, help="copies the pytest baseline runs (default 4)")
    parser.add_argument("--jobs", type=int, default=2, help="graphgrade grade --jobs (default 2)")
    args = parser.parse_args(argv)
    if args.k < 2 or args.sample < 1 or args.jobs < 1:
        parser.error("--k must be at least 2, --sample and --jobs at least 1")
    print(f"machine: {os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.2f}")
    print(f"the grader's modules: {compile_grader()}")
    work = Path(tempfile.mkdtemp(prefix="graphgrade-isolation-"))
    try:
        paths = _copies(work / "class", args.k)
        small = work / "small-suite"
        small.mkdir()
        shutil.copyfile(SMALL_SPEC, small / SMALL_SPEC.name)
        from grader.suite.loader import load_suite

        small_cases = len(load_suite(small).suite.cases)
        all_cases = len(load_suite(ROOT / "specs").suite.cases)

        one = _grade_cpu(paths[:1], small, work / "out1", args.jobs)
        many = _grade_cpu(paths, small, work / "outk", args.jobs)
        small_floor, _ = floor(paths[:4], small)  # ms per case, in one process
        fixed_ms = (many - one) / (args.k - 1) * 1000 - small_floor * small_cases
        print(f"\none spec ({small_cases} cases): 1 copy {one:.2f} s CPU, {args.k} copies {many:.2f} s CPU")
        print(f"  one more submission: {(many - one) / (args.k - 1) * 1000:.1f} ms CPU, of which its cases' floor")
        print(f"  {small_floor * small_cases:.1f} ms: the fixed cost of a submission in isolation {fixed_ms:.1f} ms")

        whole = _grade_cpu(paths, ROOT / "specs", work / "outw", args.jobs)
        full_floor, _ = floor(paths[:4])
        per_sub = (whole - one) / (args.k - 1) * 1000  # the run's start taken out as above
        overhead = (per_sub - fixed_ms) / all_cases - full_floor
        print(
            f"\nthe whole suite ({all_cases} cases): {args.k} copies {whole:.2f} s CPU, {per_sub:.0f} ms a submission"
        )
        print(f"  in-process floor {full_floor:.2f} ms a case ({full_floor * all_cases:.0f} ms a submission)")
        print(f"  per-case overhead of isolation: {overhead:.2f} ms a case ({overhead / full_floor:.2f}x the floor)")
        print(f"  CPU per case against the floor: {(per_sub / all_cases) / full_floor:.2f}x (goal 1.5x)")

        sample = paths[: args.sample]
        _, b_cpu, _ = run_baseline(sample, work / "baseline", min(args.jobs, len(sample)))
        baseline_ms = b_cpu / len(sample) * 1000
        bound = baseline_ms / (full_floor * all_cases + fixed_ms)
        budget = (baseline_ms / TARGET_RATIO - fixed_ms) / all_cases - full_floor
        print(f"\nbaseline: {baseline_ms:.0f} ms CPU a submission (pytest once per copy)")
        print(f"  cold ratio now (CPU): {baseline_ms / per_sub:.2f}x")
        print(f"  cold ratio with no per-case overhead at all (floor + fixed cost): at most {bound:.2f}x")
        print(
            f"  {TARGET_RATIO:.0f}x leaves {budget:.2f} ms a case for isolation besides the fixed cost"
            + (" (less than nothing: out of reach while the floor and the fixed cost stand)" if budget < 0 else "")
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
