"""What a trickled or a padded submission costs the grader, against an honest one (issue 25, point 5).

    python benchmarks/hostile_frames.py              # the five submissions below, the full suite
    python benchmarks/hostile_frames.py --kinds honest trickled

Each submission is the reference solution plus, for the hostile ones, module-level code (run
again before every case in ``--isolation module``, the default) that changes how the worker
writes the case's observation frame once the case has run:

* ``honest``: nothing;
* ``trickled``: every frame padded to ~1 MiB with JSON whitespace (still a valid frame, with
  the honest observations: the cases pass) and written 4 KiB at a time, with a short pause
  between writes, so that the grader reads it in small pieces;
* ``trickled-valid``: no padding, the last step's value made a 1 MiB array (a valid frame the
  grader decodes and keeps), written 4 KiB at a time as ``trickled``;
* ``padded``: a 1 MiB header and an 8 MiB blob no value uses, on every case (~9 MiB frames);
* ``padded-used``: the same 8 MiB blob made the last step's value (so decoding keeps it).

Each is graded alone, in a process of its own (``grade_submissions``, ``--no-cache``, one job),
which prints its own CPU time while grading and in all (its start, imports and specs
included; the grader's process only: not the zygote, the workers or the report writers) and
its peak resident memory. Prints figures; asserts nothing.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KINDS = ("honest", "trickled", "trickled-valid", "padded", "padded-used")

HOSTILE = """
import json as _json, os as _os, struct as _struct, time as _time
import grader.observations as _gp
from grader import framing as _framing

_KIND = {kind!r}
_HEADER = (1 << 20) - 16  # within the grader's bound on a frame's header


def _frame(uid, steps, blobs):
    blobs = list(blobs)
    if _KIND.startswith("padded"):
        blobs.append(b"\\0" * ((8 << 20) - sum(map(len, blobs))))
    elif _KIND == "trickled-valid":
        blobs.append(b"\\1" * (1 << 20))
    if _KIND in ("padded-used", "trickled-valid") and steps:
        steps[-1]["value"] = {{"ndarray": {{"dtype": "uint8", "shape": [len(blobs[-1])], "blob": len(blobs) - 1}}}}
    header = _json.dumps({{"protocol": 1, "case": uid, "steps": steps}}).encode()
    if _KIND != "trickled-valid":
        header += b" " * max(0, _HEADER - len(header))
    parts = [b"GGv1", _struct.pack("<II", len(header), len(blobs)), header]
    for blob in blobs:
        parts += [_struct.pack("<Q", len(blob)), blob]
    return _framing.frame(b"".join(parts))


_gp.observation_frame = _frame
if _KIND.startswith("trickled"):
    _write = _os.write

    def _trickle(fd, data):
        _time.sleep(0.00005)
        return _write(fd, bytes(memoryview(data)[:4096]))

    _os.write = _trickle
"""


def make(kind: str, tmp: Path) -> Path:
    folder = tmp / kind
    folder.mkdir()
    source = (ROOT / "reference" / "cudagraph.py").read_text()
    if kind != "honest":
        source += HOSTILE.format(kind=kind)
    (folder / "cudagraph.py").write_text(source)
    return folder


def grade_one(kind: str) -> None:
    """In this process: grade one submission of ``kind``; print a JSON line of figures."""
    from grader.commands.grade import grade_submissions
    from grader.run.runner import RunSettings, Zygote
    from grader.suite.loader import load_suite

    with tempfile.TemporaryDirectory(prefix="graphgrade-frames-") as tmp:
        path = make(kind, Path(tmp))
        with Zygote() as zygote:
            loaded = load_suite(ROOT / "specs")
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
                "passed": sum(1 for c in report.cases if c.status == "passed"),
                "cases": len(report.cases),
                "errors": sum(1 for c in report.cases if c.status == "error"),
            }
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--one", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        grade_one(args.one)
        return 0
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    rows = []
    for kind in args.kinds:
        out = subprocess.run(
            [sys.executable, __file__, "--one", kind], capture_output=True, text=True, cwd=ROOT, check=True
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    honest = next((r for r in rows if r["kind"] == "honest"), None)
    print(f"{'submission':<12} {'grading CPU':>11} {'process CPU':>11} {'peak RSS':>10} {'wall':>7}  cases")
    for r in rows:
        ratio = ""
        if honest and r is not honest:
            ratio = (
                f"  ({r['cpu_s'] / max(honest['cpu_s'], 1e-9):.2f}x grading CPU, "
                f"{r['process_cpu_s'] / honest['process_cpu_s']:.2f}x process CPU, "
                f"{r['peak_rss_mib'] / honest['peak_rss_mib']:.2f}x memory)"
            )
        print(
            f"{r['kind']:<12} {r['cpu_s']:>9.2f} s {r['process_cpu_s']:>9.2f} s {r['peak_rss_mib']:>7.0f} MiB {r['wall_s']:>5.1f} s  "
            f"{r['passed']}/{r['cases']} passed, {r['errors']} errors{ratio}"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
