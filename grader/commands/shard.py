"""Shards and merge: grade a class on many machines, report it as one.

``graphgrade grade SUBMISSIONS... --shard K/N`` grades the submissions whose output name
(OUT/<name>, see :func:`grader.commands.grade.unique_names`) hashes to shard K of N (1 <= K <= N).
The choice depends on the name alone, so it is the same on every machine and whatever
order the submissions are listed in; every shard is given the same list. Each shard writes,
beside its reports, ``shard.json``: which shard it is and every submission's name, in the
order given.

``graphgrade merge OUT1 OUT2 ... --out OUT`` checks that the shards belong together (the
same submissions, the same N, every K present once), copies their submission folders into
OUT and writes ``summary.html`` and ``grades.csv`` over all of them, in the order OUT1 was
given its list: the files a single run over that list writes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.errors import UsageError
from grader.judging.results import Report

MANIFEST = "shard.json"
FORMAT = 1


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` -> (K, N); a UsageError naming --shard otherwise."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise UsageError(f"--shard {text!r}: expected K/N, e.g. 2/4 (shard K of N, 1 <= K <= N)") from None
    if not 1 <= k <= n:
        raise UsageError(
            f"--shard {text}: K must be between 1 and N (shards are numbered from 1; Kubernetes and Slurm indexes from 0 need +1)"
        )
    return k, n


def shard_of(name: str, n: int) -> int:
    """The shard (1..n) a submission belongs to, from its output name alone."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big") % n + 1


def select(names: list[str], k: int, n: int) -> list[int]:
    """Indexes (in the order given) of the submissions of shard ``k`` of ``n``."""
    return [i for i, name in enumerate(names) if shard_of(name, n) == k]


def write_manifest(out_dir: Path, k: int, n: int, names: list[str], graded: list[str]) -> None:
    manifest = {"format": FORMAT, "shard": k, "of": n, "submissions": names, "graded": graded}
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")


def _read_manifest(shard_dir: Path) -> dict:
    path = shard_dir / MANIFEST
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise UsageError(
            f"{shard_dir}: no {MANIFEST} ({exc.strerror}); is it the --out of a `graphgrade grade --shard K/N` run?"
        ) from None
    except ValueError:
        raise UsageError(f"{path}: not valid JSON") from None
    ok = (
        isinstance(data, dict)
        and data.get("format") == FORMAT
        and all(isinstance(data.get(k), int) and not isinstance(data.get(k), bool) for k in ("shard", "of"))
        and all(
            isinstance(data.get(k), list) and all(isinstance(x, str) for x in data[k])
            for k in ("submissions", "graded")
        )
    )
    if not ok:
        raise UsageError(f"{path}: not a shard manifest of this graphgrade (format {FORMAT})")
    for name in data["submissions"] + data["graded"]:  # they become folder names under --out
        if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]*", name):
            raise UsageError(
                f"{path}: {name[:80]!r} is not a submission name graphgrade gives (letters, digits, '.', '_', '-')"
            )
    return data


def merge(shard_dirs: list[Path], out_dir: Path) -> list[MergedSubmission]:
    """Join shards into ``out_dir``; returns its submissions, in the run's order."""
    from grader.judging.results import ReportError, read_report
    from reports import write_batch_outputs

    manifests = [_read_manifest(d) for d in shard_dirs]
    first = manifests[0]
    n, names = first["of"], first["submissions"]
    for d, m in zip(shard_dirs, manifests):
        if m["of"] != n or sorted(m["submissions"]) != sorted(names):
            raise UsageError(f"{d}: a shard of another run (its submissions or N differ from {shard_dirs[0]}'s)")
    seen: dict[int, Path] = {}
    for d, m in zip(shard_dirs, manifests):
        if m["shard"] in seen:
            raise UsageError(f"{d}: shard {m['shard']}/{n} given twice (also {seen[m['shard']]})")
        seen[m["shard"]] = d
    missing = sorted(set(range(1, n + 1)) - set(seen))
    if missing:
        raise UsageError(
            f"shard{'s' if len(missing) > 1 else ''} {', '.join(f'{k}/{n}' for k in missing)} not given: merge needs all {n}"
        )
    where: dict[str, Path] = {}
    for d, m in zip(shard_dirs, manifests):
        for name in m["graded"]:
            if name not in names or shard_of(name, n) != m["shard"]:
                raise UsageError(f"{d}: holds {name!r}, which is not in shard {m['shard']}/{n}")
            where[name] = d / name
    absent = [name for name in names if name not in where]
    if absent:
        raise UsageError(
            f"{len(absent)} submission{'s' if len(absent) > 1 else ''} graded by no shard (first: {absent[0]}); was a shard stopped early?"
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out_dir}: cannot make the folder ({exc.strerror or exc})") from None
    if os.geteuid() == 0:
        os.chmod(out_dir, 0o700)  # as grade does: reports hold what staff see
    reports, dirs = [], []
    for name in names:
        source, target = where[name], out_dir / name
        try:
            report = read_report(source / "report.json")
        except (OSError, ValueError, ReportError) as exc:
            raise UsageError(f"{source / 'report.json'}: cannot be read ({exc})") from None
        if source.resolve() != target.resolve():
            try:
                if target.exists():
                    shutil.rmtree(target)
                shutil.copytree(source, target)
            except OSError as exc:
                raise UsageError(f"--out {out_dir}: cannot copy {source} there ({exc.strerror or exc})") from None
        reports.append(report)
        dirs.append(target)
    graded_with = {(r.grader_version, tuple((s.id, s.points) for s in r.specs)) for r in reports}
    if len(graded_with) > 1:  # scores from other specs or another grader do not add up in one summary
        raise UsageError(
            "the shards were graded with different specs or graphgrade versions; grade every shard with the same ones"
        )
    write_batch_outputs(reports, dirs, out_dir)
    return [
        MergedSubmission(name, Path(report.path), report, target) for name, report, target in zip(names, reports, dirs)
    ]


@dataclass(frozen=True)
class MergedSubmission:
    """One submission of a merged run, as the similarity check takes a graded one."""

    name: str
    path: Path  # the path it was graded from (report.json's ``path``)
    report: Report
    out_dir: Path


def cmd_merge(args: argparse.Namespace) -> int:
    from grader.commands import similarity

    merged = merge(list(args.shards), args.out)
    print(
        f"merged {len(args.shards)} shards: {len(merged)} submissions; summary.html and grades.csv in {args.out}/",
        file=sys.stderr,
    )
    # A shard compares only its own share of the class: the whole class is compared here, from
    # the sources the reports were graded from, as a single run would.
    if (
        args.similarity
        and len(merged) > 1
        and not all(m.path.exists() and str(m.path) not in ("", ".") for m in merged)
    ):
        print(
            "graphgrade: similarity: the graded sources are not all here (report.json's path), so pairs were not compared",
            file=sys.stderr,
        )
    else:
        background = similarity.start_for_batch(args, [m.name for m in merged], [m.path for m in merged])
        similarity.after_grading(args, merged, background)
    return 0


def add_merge_parser(sub) -> None:
    m = sub.add_parser(
        "merge", help="join the --out folders of `grade --shard K/N` runs into one summary.html and grades.csv"
    )
    m.add_argument(
        "shards", nargs="+", type=Path, metavar="SHARD_OUT", help="the --out folder of each shard (all N of them)"
    )
    m.add_argument(
        "--out", type=Path, required=True, help="folder for the merged reports (may be one of the shard folders)"
    )
    from grader.commands import similarity

    similarity.add_grade_options(m)
    m.set_defaults(func=cmd_merge)
