"""The regrades of ``throughput.py``: the specs it edits, what it prints of each, and its record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = Path(__file__).resolve().with_name("record.jsonl")


def edited_specs(work: Path, kind: str) -> Path:
    """A copy of the suite with one spec's steps changed (every case of launch-counter-basics
    reads the counter once more at its end) or one check's expected value changed."""
    import yaml

    specs = work / f"specs-{kind}"
    shutil.copytree(ROOT / "specs", specs)
    path = specs / "01_launch_counter.yaml"
    if kind == "steps":
        data = yaml.safe_load(path.read_text())
        for case in data["specs"][0]["cases"]:
            case["steps"].append({"read": "n", "of": "LaunchCounter"})
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    else:
        text = path.read_text()
        old = "value: {step: n_after_reset, equals: 0}"
        if text.count(old) != 1:
            raise SystemExit(f"benchmark: the check to edit is no longer in {path}")
        path.write_text(text.replace(old, "value: {step: n_after_reset, equals: 1}"))
    return specs


def record(args, cold: float, floor_x: float, rejudge: float, one_spec: float, unchanged: float, cores: int) -> None:
    """One JSON line per run in benchmarks/record.jsonl: the ratios and what they were measured on."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    line = {
        "date": time.strftime("%Y-%m-%d"),
        "commit": commit or "unknown",
        "n": args.n,
        "jobs": args.jobs,
        "cores": cores,
        "cold_x_pytest": round(cold, 2),
        "cpu_x_floor": round(floor_x, 2),
        "rejudge_x_cold": round(rejudge, 1),
        "one_spec_x_cold": round(one_spec, 1),
        "unchanged_x_cold": round(unchanged, 1),
        "load_end": round(os.getloadavg()[0], 2),
    }
    with RECORD.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
    print(f"  recorded in {RECORD}")


def rewritten(before: Path, after: Path, paths: list[Path]) -> str:
    """How many of the class's report files the regrade wrote (a written file is a new inode)."""
    names = ("report.json", "report.html", "staff.html", "results.json", "junit.xml")
    total = written = 0
    for path in paths:
        for name in names:
            try:
                old, new = os.stat(before / path.name / name), os.stat(after / path.name / name)
            except OSError:
                continue
            total += 1
            # the copy kept each file's mtime (copy2): a file the regrade wrote has a later one
            written += new.st_mtime_ns != old.st_mtime_ns
    return f"{written} of {total} report files written"


def cache_line(proc: subprocess.CompletedProcess) -> str:
    return next((line for line in proc.stderr.splitlines() if line.startswith("cache:")), "cache: (no line)")
