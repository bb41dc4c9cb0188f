"""Similarity's peak memory for a class, with and without one padded submission (issue 25, point 3).

    python benchmarks/similarity_memory.py            # 500 submissions (a few minutes on 2 cores)
    python benchmarks/similarity_memory.py --n 200

The class is benchmarks/similarity.py's (the reference and the correct variants, renamed and
shuffled, one in ten a disguised copy). Each variant is compared in a fresh process (reading
every submission as the grader does, then ``compare``), which prints its peak resident memory:

* ``class``: the class alone;
* ``padded-data``: one submission also holds a 530,000-character ``a_table.py`` of numbers
  (sorts before cudagraph.py; before this change it pushed the real code out and took the
  comparison from 505 MiB to 4.1 GiB at 500);
* ``padded-code``: the same size of distinct, real-looking functions (compared, up to the bound).

Also says whether the padded submission's own copy (it is a verbatim copy of the first
submission) is listed. Prints figures; asserts nothing. The target: a padded class at most
1.5x the class's peak.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

VARIANTS = ("class", "padded-data", "padded-code")


def padding(kind: str, chars: int = 530_000) -> str:
    parts, size, i = [], 0, 0
    while size < chars:
        if kind == "data":
            part = "    (" + ", ".join(str((i * 7919 + j) % 100003) for j in range(12)) + "),\n"
        else:
            part = f"def helper_{i}(a, b):\n    c = a * {i} + b\n    if c > {i % 97}:\n        return c - a\n    return [c, a, b, {i}]\n\n\n"
        parts.append(part)
        size += len(part)
        i += 1
    body = "".join(parts)
    return f"TABLE = [\n{body}]\n" if kind == "data" else body


def one(variant: str, n: int) -> None:
    import similarity as bench  # benchmarks/similarity.py: the class

    from grader.commands.similarity import DEFAULT_THRESHOLD, compare, default_template, submission_source

    with tempfile.TemporaryDirectory(prefix="graphgrade-simmem-") as tmp:
        paths = bench.make_class(n, Path(tmp))
        if variant != "class":
            thief = Path(tmp) / "thief"
            thief.mkdir()
            shutil.copy(paths[0] / "cudagraph.py", thief / "cudagraph.py")  # a verbatim copy
            (thief / "a_table.py").write_text(padding(variant.split("-")[1]))
            paths[-1] = thief  # the class keeps its size
        t0 = time.monotonic()
        sources = {p.name: submission_source(p) for p in paths}
        result = compare(sources, submission_source(default_template()), DEFAULT_THRESHOLD)
        seconds = time.monotonic() - t0
        found = any({p.a, p.b} == {paths[0].name, "thief"} for p in result.pairs)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"variant": variant, "peak_mib": round(peak), "seconds": round(seconds, 1), "copy_listed": found}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    ap.add_argument("--one", choices=VARIANTS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.one, args.n)
        return 0
    print(f"load average at the start: {os.getloadavg()[0]:.1f}; {args.n} submissions")
    rows = []
    for variant in args.variants:
        out = subprocess.run(
            [sys.executable, __file__, "--one", variant, "--n", str(args.n)],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        r = rows[-1]
        base = rows[0]["peak_mib"] if rows[0]["variant"] == "class" else None
        ratio = f" ({r['peak_mib'] / base:.2f}x the class)" if base and r is not rows[0] else ""
        listed = "" if r["variant"] == "class" else f"; the padded copy {'is' if r['copy_listed'] else 'is NOT'} listed"
        print(f"{r['variant']:<12} peak {r['peak_mib']:>5} MiB{ratio}, {r['seconds']:.1f} s{listed}", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
