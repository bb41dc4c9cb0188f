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

A shard folder comes from another machine, so merge trusts none of it: it opens only the
files it expects (``shard.json``, and in each submission's folder the files grade writes
there, as :mod:`reports.outputs` lists them), each without following a link (``O_NOFOLLOW``, folders
too), only if it is a regular file (never a FIFO or a device: opened non-blocking, checked
with ``fstat`` before a byte is read) and reading at most its bound. Every total is added
up again from the cases read (each spec's score from its cases, the submission's from its
specs): a report.json whose totals disagree with its cases is that submission's problem,
shown on summary.html, and grades.csv holds its cases' totals, never the file's.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import hashlib
import json
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.commands.cli_common import Subcommand
from grader.errors import UsageError
from grader.judging.results import Report
from grader.safetext import one_line as safe_one_line

MANIFEST = "shard.json"
FORMAT = 1
MAX_MANIFEST_BYTES = 16 << 20
MAX_PAGE_BYTES = 64 << 20  # of any one of them but report.json (grader.judging.report_reading.MAX_REPORT_BYTES)


class UnsafeFile(Exception):
    """A file merge will not read: a link, not a regular file, or over its bound (the text says which)."""


def read_regular(path: Path, limit: int, dir_fd: int | None = None) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes, opened without following
    a link and without blocking (a FIFO or a device is refused before anything is read, and
    the size is bounded while reading, whatever ``stat`` said); raises :class:`UnsafeFile` or OSError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(f"{path}: a link (merge follows none)") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFile(f"{path}: not a regular file (merge reads no FIFO, device or socket)")
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise UnsafeFile(f"{path}: larger than the {limit} bytes merge reads")
        return b"".join(chunks)
    finally:
        os.close(fd)


def open_folder(path: Path, dir_fd: int | None = None) -> int:
    """A descriptor of the folder ``path``, not followed if it is a link; raises :class:`UnsafeFile` or OSError."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafeFile(f"{path}: not a folder (a link, or a file)") from None
        raise


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
        folder = os.open(shard_dir, os.O_RDONLY | os.O_DIRECTORY)  # the folder named is followed; nothing in it is
        try:
            data = json.loads(read_regular(Path(MANIFEST), MAX_MANIFEST_BYTES, folder))
        finally:
            os.close(folder)
    except UnsafeFile as exc:
        raise UsageError(str(exc) if str(exc).startswith(str(shard_dir)) else f"{shard_dir}/{exc}") from None
    except OSError as exc:
        raise UsageError(
            f"{shard_dir}: no {MANIFEST} ({exc.strerror}); is it the --out of a `graphgrade grade --shard K/N` run?"
        ) from None
    except (ValueError, RecursionError):
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
    from reports import write_batch_outputs
    from reports.outputs import MERGE

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
        report, _ = _take_submission(source, target, name)
        reports.append(report)
        dirs.append(target)
    good = [r for r in reports if r.cases]
    graded_with = {(r.grader_version, tuple((s.id, s.points) for s in r.specs)) for r in good}
    if len(graded_with) > 1:  # scores from other specs or another grader do not add up in one summary
        raise UsageError(
            "the shards were graded with different specs or graphgrade versions; grade every shard with the same ones"
        )
    if good:  # a submission merge could not read scores nothing, out of what the others could score
        reports = [r if r.cases else _unreadable_report(r, good[0]) for r in reports]
    for report, target in zip(reports, dirs):
        if report.problem.startswith(MERGE_PROBLEM):  # its pages say what merge found, not what the files said
            _write_problem_pages(report, target)
    write_batch_outputs(reports, dirs, out_dir, command=MERGE)
    return [
        MergedSubmission(name, Path(report.path), report, target, report.problem.startswith(MERGE_PROBLEM))
        for name, report, target in zip(names, reports, dirs)
    ]


MERGE_PROBLEM = "merge: "  # how a problem merge found starts (summary.html shows it)


def _take_submission(source: Path, target: Path, name: str) -> tuple[Report, str]:
    """One submission's report, read safely and with its totals added up again, and its files
    copied into ``target``; or, when they cannot be read, a report that says why (and the
    problem's text)."""
    from grader.judging.report_reading import MAX_REPORT_BYTES, ReportError, report_from_json
    from reports.outputs import MERGE, submission_files

    files: dict[str, bytes] = {}
    try:
        folder = open_folder(source)
        try:
            files["report.json"] = read_regular(Path("report.json"), MAX_REPORT_BYTES, folder)
            for file in submission_files(MERGE):
                if file == "report.json":
                    continue
                try:
                    files[file] = read_regular(Path(file), MAX_PAGE_BYTES, folder)
                except FileNotFoundError:
                    continue
        finally:
            os.close(folder)
        report = report_from_json(json.loads(files["report.json"]))
    except UnsafeFile as exc:
        problem = f"{source}/{exc}" if not str(exc).startswith(str(source)) else str(exc)
        return _problem_report(name, problem), problem
    except (OSError, ValueError, RecursionError, ReportError) as exc:
        text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        problem = f"{source / 'report.json'}: cannot be read ({text[:300]})"
        return _problem_report(name, problem), problem
    report, problem = recount(report, source / "report.json")
    if source.resolve() != target.resolve():
        try:
            _replace_folder(target, files)
        except OSError as exc:
            raise UsageError(f"--out {target.parent}: cannot copy {source} there ({exc.strerror or exc})") from None
    return report, problem


def recount(report: Report, where: Path) -> tuple[Report, str]:
    """``report`` with every total added up from its cases again; and, when the file's totals
    disagree with its cases, the problem (also set on the report, before its own)."""
    from grader.judging.scoring import add_points

    specs = tuple(
        dataclasses.replace(
            s,
            score=add_points(c.score for c in report.cases if c.spec == s.id),
            max_score=add_points(c.max_score for c in report.cases if c.spec == s.id),
        )
        for s in report.specs
    )
    score = add_points(c.score for c in report.cases)
    max_score = add_points(s.max_score for s in specs)
    wrong = [s.id for s, t in zip(report.specs, specs) if (s.score, s.max_score) != (t.score, t.max_score)]
    if (report.score, report.max_score) != (score, max_score):
        wrong.append("total")
    bad_case = [c.case for c in report.cases if not 0 <= c.score <= c.max_score]
    if not wrong and not bad_case:
        return report, ""
    said = f"{report.score:g} of {report.max_score:g}"
    problem = (
        f"{MERGE_PROBLEM}{where}: its totals ({', '.join(wrong[:5]) or 'cases'}) disagree with its cases "
        f"(it says {said}, its cases add up to {score:g} of {max_score:g}); the totals shown are its cases'"
    )
    if bad_case:
        problem += f"; case {bad_case[0]} scores outside 0 to its points"
    both = problem + (f" ({report.problem})" if report.problem else "")
    return dataclasses.replace(report, specs=specs, score=score, max_score=max_score, problem=both), problem


def _problem_report(name: str, problem: str) -> Report:
    return Report(submission=name, score=0.0, max_score=0.0, cases=(), specs=(), problem=MERGE_PROBLEM + problem)


def _unreadable_report(report: Report, like: Report) -> Report:
    """A submission merge could not read, against the specs the others were graded with: zero of their points."""
    specs = tuple(dataclasses.replace(s, score=0.0) for s in like.specs)
    return dataclasses.replace(report, specs=specs, max_score=like.max_score, grader_version=like.grader_version)


def _write_problem_pages(report: Report, target: Path) -> None:
    """The files grade writes for a submission, rendered from ``report`` into ``target`` (made a
    real folder first: a link there is removed, never written through)."""
    from reports import write_submission_outputs
    from reports.outputs import MERGE, submission_files

    try:
        if not stat.S_ISDIR(os.lstat(target).st_mode):
            os.unlink(target)
    except FileNotFoundError:
        pass
    for file in submission_files(MERGE):  # a link or FIFO there (a shard merged into itself) goes first
        try:
            if not stat.S_ISREG(os.lstat(target / file).st_mode):
                os.unlink(target / file)
        except OSError:
            pass
    try:
        target.mkdir(exist_ok=True)
        write_submission_outputs(report, target, command=MERGE)
    except OSError as exc:
        raise UsageError(
            f"--out {target.parent}: cannot write {target.name}'s reports ({exc.strerror or exc})"
        ) from None


def _replace_folder(target: Path, files: dict[str, bytes]) -> None:
    """``target`` made anew (a link or file there is removed, never followed) holding ``files``."""
    from grader.run.copying import remove_tree

    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            remove_tree(target)
        else:
            os.unlink(target)
    target.mkdir()
    for file, data in files.items():
        fd = os.open(target / file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        with os.fdopen(fd, "wb") as f:
            f.write(data)


@dataclass(frozen=True)
class MergedSubmission:
    """One submission of a merged run, as the similarity check takes a graded one."""

    name: str
    path: Path  # the path it was graded from (report.json's ``path``)
    report: Report
    out_dir: Path
    problem: bool = False  # merge found a problem with what the shard holds of it


def run(args: argparse.Namespace) -> int:
    from grader.commands import similarity

    merged = merge(list(args.shards), args.out)
    problems = [m for m in merged if m.problem]
    for m in problems:
        print(f"graphgrade: {m.name}: {safe_one_line(m.report.problem)[:400]}", file=sys.stderr)
    print(
        f"merged {len(args.shards)} shards: {len(merged)} submissions; summary.html and grades.csv in {args.out}/"
        + (f"; {len(problems)} with a problem (see summary.html)" if problems else ""),
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
    return 3 if problems else 0


def add_arguments(m: argparse.ArgumentParser) -> None:
    m.add_argument(
        "shards", nargs="+", type=Path, metavar="SHARD_OUT", help="the --out folder of each shard (all N of them)"
    )
    m.add_argument(
        "--out", type=Path, required=True, help="folder for the merged reports (may be one of the shard folders)"
    )
    from grader.commands import similarity

    similarity.add_grade_options(m)


COMMAND = Subcommand(
    "merge",
    help="join the --out folders of `grade --shard K/N` runs into one summary.html and grades.csv",
    add_arguments=add_arguments,
    run=run,
)
