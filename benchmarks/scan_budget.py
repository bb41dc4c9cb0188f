"""What the integrity scan of a hostile submission costs the grader, against an honest one (issue 31.4).

    python benchmarks/scan_budget.py                       # honest, then the attribute chains
    python benchmarks/scan_budget.py --root /tmp/before    # the same, with another checkout's grader

* ``honest``: the reference solution;
* ``chains``: the reference solution plus seven 1 MiB Python files of long attribute chains
  (``x = np.a.a.a...``, 250 links a line), which the scan once walked again from every link of
  a chain (quadratic) in the grader's own process, under the lock every judging takes.

Each is graded alone, in a process of its own (``grade_submissions``, ``--no-cache``, one job), which
prints the CPU time of the grader's own process while grading and in all (its start, imports and
specs included; not the zygote, the workers, the report writers or the scan's process) and its peak
resident memory, and what the scan said (its flags' rules); and, measured before the grading, the
scan alone: in its own process where the grader has one (that process's CPU and peak memory),
else in the grader's. ``--root`` grades with the grader of
another checkout (``git archive`` of an older commit, say), for before-and-after figures in one run.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = ("honest", "chains")
CHAIN_FILES, CHAIN_BYTES, CHAIN_LINKS = 7, 1 << 20, 250


def make(kind: str, tmp: Path, root: Path) -> Path:
    folder = tmp / kind
    folder.mkdir()
    (folder / "cudagraph.py").write_text((root / "reference" / "cudagraph.py").read_text())
    if kind == "chains":
        line = "x = np" + ".a" * CHAIN_LINKS + "\n"
        body = "import numpy as np\n" + line * ((CHAIN_BYTES - 20) // len(line))
        for i in range(CHAIN_FILES):
            (folder / f"chain{i}.py").write_text(body)
    return folder


def grade_one(kind: str, root: Path) -> None:
    """In this process: grade one submission of ``kind``; print a JSON line of figures."""
    sys.path.insert(0, str(root))
    from grader.commands.grade import grade_submissions
    from grader.judging import integrity
    from grader.run.runner import RunSettings, Zygote
    from grader.suite.loader import load_suite

    with tempfile.TemporaryDirectory(prefix="graphgrade-scan-") as tmp:
        path = make(kind, Path(tmp), root)
        # The scan alone, first (this process has no other child yet): in its own process where
        # the grader has one (its CPU and peak memory are that child's), else in this process.
        if hasattr(integrity, "ScanService"):
            t0 = time.monotonic()
            service = integrity.ScanService()
            service.submit(path).flags()
            service.close()  # the server and its child, both reaped: this process's only children
            child = resource.getrusage(resource.RUSAGE_CHILDREN)
            scan = {"where": "own process", "cpu_s": child.ru_utime + child.ru_stime, "rss_mib": child.ru_maxrss / 1024}
        else:
            own, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
            integrity.integrity_flags(path)
            done = resource.getrusage(resource.RUSAGE_SELF)
            cpu = done.ru_utime - own.ru_utime + done.ru_stime - own.ru_stime
            scan = {"where": "grader process", "cpu_s": cpu, "rss_mib": done.ru_maxrss / 1024}
        scan["wall_s"] = time.monotonic() - t0
        with Zygote() as zygote:
            loaded = load_suite(root / "specs")
            before = resource.getrusage(resource.RUSAGE_SELF)
            t0 = time.monotonic()
            graded = grade_submissions(
                zygote, loaded, loaded.suite.specs, [path], Path(tmp) / "out", RunSettings(), jobs=1
            )
            wall = time.monotonic() - t0
            after = resource.getrusage(resource.RUSAGE_SELF)
    report = graded[0].report
    print(
        json.dumps(
            {
                "kind": kind,
                "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 3),
                "process_cpu_s": round(after.ru_utime + after.ru_stime, 3),
                "peak_rss_mib": round(after.ru_maxrss / 1024, 1),
                "wall_s": round(wall, 2),
                "score": report.score,
                "flags": sorted({f.rule for f in report.flags}),
                "scan": {k: round(v, 2) if isinstance(v, float) else v for k, v in scan.items()},
            }
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--root", type=Path, default=HERE.parent, help="the checkout whose grader grades")
    parser.add_argument("--one", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = args.root.resolve()
    if args.one:
        grade_one(args.one, root)
        return 0
    print(f"grader: {root}; load average at the start: {os.getloadavg()[0]:.1f}")
    rows = []
    for kind in args.kinds:
        out = subprocess.run(
            [sys.executable, __file__, "--one", kind, "--root", str(root)],
            capture_output=True,
            text=True,
            cwd=root,
            check=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    honest = next((r for r in rows if r["kind"] == "honest"), None)
    print(f"{'submission':<10} {'grading CPU':>11} {'process CPU':>11} {'peak RSS':>10} {'wall':>7}  score, flags")
    for r in rows:
        ratio = ""
        if honest and r is not honest:
            ratio = (
                f"  ({r['cpu_s'] / max(honest['cpu_s'], 1e-9):.2f}x grading CPU, "
                f"{r['process_cpu_s'] / honest['process_cpu_s']:.2f}x process CPU, "
                f"{r['peak_rss_mib'] / honest['peak_rss_mib']:.2f}x memory)"
            )
        print(
            f"{r['kind']:<10} {r['cpu_s']:>9.2f} s {r['process_cpu_s']:>9.2f} s {r['peak_rss_mib']:>7.0f} MiB "
            f"{r['wall_s']:>5.1f} s  {r['score']}, {','.join(r['flags']) or '-'}{ratio}"
        )
        scan = r["scan"]
        print(
            f"{'':<10} the scan alone, in the {scan['where']}: {scan['cpu_s']:.2f} CPU-s, "
            f"{scan['rss_mib']:.0f} MiB peak, {scan['wall_s']:.1f} s"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
