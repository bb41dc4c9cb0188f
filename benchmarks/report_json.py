"""Writing report.json: orjson (what grader.judging.report_writing uses) against the hand-written
writer it replaced, msgspec and the json module (issue 32, point 5).

The reports are real: the reference and the student template graded with ``graphgrade grade``
(the whole suite, so report.json holds every case), or the report.json files under ``--reports``.
Each writer turns each typed report (read back with ``read_report``) into report.json's text,
``--rounds`` times; the best of three runs is printed per report, with the text's size and what
a class of ``--class-size`` reports (two kinds, half each) costs at that rate.

    python benchmarks/report_json.py                    # grades reference and template first
    python benchmarks/report_json.py --reports DIR      # every DIR/**/report.json

Prints figures and asserts nothing but that every writer's text reads back to the same report.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from grader.judging.report_reading import read_report, report_from_json  # noqa: E402
from grader.judging.report_writing import report_json_text, report_to_json  # noqa: E402
from grader.judging.results import Report  # noqa: E402

# The hand-written writer report_writing replaced (json.dumps(..., indent=1, sort_keys=True) byte
# for byte, reading the result types directly), kept here as the baseline.
_encode_text = json.encoder.encode_basestring_ascii
_SORTED: dict[type, tuple[str, ...]] = {}
_PREFIXES: dict[tuple[type, str], tuple[tuple[str, str], ...]] = {}


def _scalar_text(value):
    kind = type(value)
    if kind is str:
        return _encode_text(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value:
            return "NaN"
        if value in (math.inf, -math.inf):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    return None


def _write_json(value, indent: str, out: list) -> None:
    text = _scalar_text(value)
    if text is not None:
        out.append(text)
        return
    kind = type(value)
    inner = indent + " "
    if kind is tuple or kind is list:
        if not value:
            out.append("[]")
            return
        separator = "[\n" + inner
        for item in value:
            out.append(separator)
            separator = ",\n" + inner
            text = _scalar_text(item)
            out.append(text) if text is not None else _write_json(item, inner, out)
        out.append("\n" + indent + "]")
        return
    prefixes = _PREFIXES.get((kind, indent))
    if prefixes is None:
        names = _SORTED.setdefault(kind, tuple(sorted(kind.__dataclass_fields__)))
        prefixes = _PREFIXES[(kind, indent)] = tuple(
            (name, ("{\n" if i == 0 else ",\n") + inner + _encode_text(name) + ": ") for i, name in enumerate(names)
        )
    if not prefixes:
        out.append("{}")
        return
    for name, prefix in prefixes:
        out.append(prefix)
        item = getattr(value, name)
        text = _scalar_text(item)
        out.append(text) if text is not None else _write_json(item, inner, out)
    out.append("\n" + indent + "}")


def hand_written(report: Report) -> str:
    out: list[str] = []
    _write_json(report, "", out)
    out.append("\n")
    return "".join(out)


def writers() -> dict[str, object]:
    out = {
        "orjson (report_writing)": report_json_text,
        "hand-written (replaced)": hand_written,
        "json.dumps indent=1 sorted": lambda r: json.dumps(report_to_json(r), indent=1, sort_keys=True) + "\n",
    }
    try:
        import msgspec
    except ImportError:
        return out
    encoder = msgspec.json.Encoder(order="sorted")
    out["msgspec sorted, compact"] = lambda r: encoder.encode(r).decode()
    out["msgspec sorted, indent=1"] = lambda r: msgspec.json.format(encoder.encode(r), indent=1).decode()
    return out


def graded_reports(work: Path) -> list[Path]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "grade",
            "reference",
            "student_template",
            "--out",
            str(work),
            "--no-similarity",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"graphgrade grade exited {done.returncode}: {done.stderr[-2000:]}")
    return sorted(work.glob("*/report.json"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--reports", type=Path, help="a folder of report.json files (default: grade reference and template)"
    )
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--class-size", type=int, default=1000)
    args = parser.parse_args()
    if args.reports:
        paths = sorted(args.reports.rglob("report.json"))
    else:
        paths = graded_reports(Path(tempfile.mkdtemp(prefix="graphgrade-report-json-")))
    reports = [read_report(p) for p in paths]
    if not reports:
        raise SystemExit("no report.json found")
    print(
        f"{len(reports)} reports ({', '.join(r.submission for r in reports)}), {sum(len(r.cases) for r in reports)} cases"
    )
    print(f"{'writer':30s} {'ms/report':>10s} {'bytes/report':>13s} {f'class of {args.class_size}':>14s}")
    for name, write in writers().items():
        for report in reports:  # every writer's text is the same report
            assert report_from_json(json.loads(write(report))) == report, name
        best = math.inf
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(args.rounds):
                for report in reports:
                    write(report)
            best = min(best, (time.perf_counter() - start) / args.rounds / len(reports))
        size = sum(len(write(r).encode()) for r in reports) // len(reports)
        print(f"{name:30s} {best * 1000:10.2f} {size:13d} {best * args.class_size:13.1f}s")
    print(f"orjson {orjson.__version__}")


if __name__ == "__main__":
    main()
