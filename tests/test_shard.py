"""Shards and merge (grader.commands.shard): each submission in exactly one shard whatever the order,
two shards merged equal one run, merge refuses shards that do not belong together, and the
batch-engine examples in deploy/ run the commands the CLI accepts, covering shards 1..N."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from grader.commands.cli import build_parser
from grader.commands.shard import merge, parse_shard, select, shard_of
from grader.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def test_every_submission_is_in_exactly_one_shard_whatever_the_order():
    names = [f"student{i:03d}" for i in range(200)]
    for n in (1, 2, 3, 7):
        shards = [set(names[i] for i in select(names, k, n)) for k in range(1, n + 1)]
        assert set().union(*shards) == set(names) and sum(map(len, shards)) == len(names)
        reordered = list(reversed(names))
        assert [set(reordered[i] for i in select(reordered, k, n)) for k in range(1, n + 1)] == shards
        assert all(len(s) > len(names) / n / 2 for s in shards)  # roughly balanced
    assert shard_of("alice", 4) == shard_of("alice", 4)


@pytest.mark.parametrize("bad", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_is_a_usage_error_naming_the_flag(bad):
    with pytest.raises(UsageError, match="--shard"):
        parse_shard(bad)


def _class(tmp: Path) -> list[Path]:
    subs = [
        ROOT / "reference",
        *sorted(p for p in (ROOT / "tests" / "correct_variants").iterdir() if (p / "cudagraph.py").is_file()),
    ]
    source = (ROOT / "reference" / "cudagraph.py").read_text()
    for name, (old, new) in {"buggy": ("        cls.n = 0\n", "        pass\n"), "empty": (source, "")}.items():
        d = tmp / name
        d.mkdir()
        (d / "cudagraph.py").write_text(source.replace(old, new, 1))
        subs.append(d)
    return subs


def _grade(subs: list[Path], out: Path, *extra: str) -> None:
    cmd = [
        sys.executable,
        "-m",
        "grader.commands.cli",
        "grade",
        *map(str, subs),
        "--out",
        str(out),
        "--no-cache",
        "--visibility",
        "visible",
        *extra,
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr


def _untimed(obj):
    if isinstance(obj, dict):
        return {k: _untimed(v) for k, v in obj.items() if k not in ("duration_s", "execution_time")}
    if isinstance(obj, list):
        return [_untimed(v) for v in obj]
    return obj


@pytest.mark.slow
def test_two_shards_merged_equal_one_run(tmp_path):
    subs = _class(tmp_path)
    _grade(subs, tmp_path / "whole")
    _grade(list(reversed(subs)), tmp_path / "s1", "--shard", "1/2")  # any order: same shards
    _grade(subs, tmp_path / "s2", "--shard", "2/2")
    graded = [json.loads((tmp_path / s / "shard.json").read_text())["graded"] for s in ("s1", "s2")]
    assert graded[0] and graded[1]  # both shards did some of the work
    # the first shard given sets the order (s2 was given the list in the whole run's order)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.commands.cli",
            "merge",
            str(tmp_path / "s2"),
            str(tmp_path / "s1"),
            "--out",
            str(tmp_path / "merged"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    whole, merged = tmp_path / "whole", tmp_path / "merged"
    assert (merged / "summary.html").read_text() == (whole / "summary.html").read_text()
    assert (merged / "grades.csv").read_text() == (whole / "grades.csv").read_text()
    names = sorted(p.name for p in whole.iterdir() if p.is_dir())
    assert names == sorted(p.name for p in merged.iterdir() if p.is_dir()) and len(names) == len(subs)
    for name in names:
        for file in ("report.json", "results.json"):
            assert _untimed(json.loads((merged / name / file).read_text())) == _untimed(
                json.loads((whole / name / file).read_text())
            )


def _fake_shards(tmp: Path, n: int, names: list[str], only: list[int]) -> list[Path]:
    dirs = []
    for k in only:
        d = tmp / f"shard{k}"
        d.mkdir(parents=True, exist_ok=True)
        graded = [names[i] for i in select(names, k, n)]
        (d / "shard.json").write_text(
            json.dumps({"format": 1, "shard": k, "of": n, "submissions": names, "graded": graded})
        )
        dirs.append(d)
    return dirs


def test_merge_refuses_shards_that_do_not_belong_together(tmp_path):
    names = [f"s{i}" for i in range(10)]
    with pytest.raises(UsageError, match="3/3 not given"):
        merge(_fake_shards(tmp_path / "a", 3, names, [1, 2]), tmp_path / "out")
    with pytest.raises(UsageError, match="given twice"):
        merge(_fake_shards(tmp_path / "b", 2, names, [1, 2, 2]), tmp_path / "out")
    mixed = _fake_shards(tmp_path / "c", 2, names, [1]) + _fake_shards(tmp_path / "d", 2, names + ["extra"], [2])
    with pytest.raises(UsageError, match="another run"):
        merge(mixed, tmp_path / "out")
    (tmp_path / "e").mkdir()
    with pytest.raises(UsageError, match="shard.json"):
        merge([tmp_path / "e"], tmp_path / "out")


# ------------------------------------------------------------------ the deploy/ examples
@pytest.fixture
def fake_bin(tmp_path):
    """``graphgrade``, ``sbatch`` and ``sudo`` stand-ins that record their arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.jsonl"
    recorder = f"#!{sys.executable}\nimport json, os, sys\nwith open({str(log)!r}, 'a') as f:\n    f.write(json.dumps([os.path.basename(sys.argv[0]), *sys.argv[1:]]) + '\\n')\n"
    for name in ("graphgrade", "sbatch"):
        (bin_dir / name).write_text(recorder)
        (bin_dir / name).chmod(0o755)
    (bin_dir / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
    (bin_dir / "sudo").chmod(0o755)

    def calls() -> list[list[str]]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    return bin_dir, calls


def _env(bin_dir: Path, **extra: str) -> dict[str, str]:
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), **extra}


def _shards_of(calls: list[list[str]]) -> list[tuple[int, int]]:
    found = []
    for call in calls:
        if call[0] == "graphgrade" and call[1] == "grade":
            args = build_parser().parse_args(call[1:])  # the CLI accepts it as written
            found.append(parse_shard(args.shard))
    return found


def test_the_kubernetes_indexed_job_covers_every_shard(fake_bin, tmp_path):
    bin_dir, calls = fake_bin
    job = yaml.safe_load((DEPLOY / "k8s-indexed-job.yaml").read_text())
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    container = spec["template"]["spec"]["containers"][0]
    for index in range(spec["completions"]):
        subprocess.run(
            [*container["command"], *container["args"]], env=_env(bin_dir, JOB_COMPLETION_INDEX=str(index)), check=True
        )
    shards = _shards_of(calls())
    n = spec["completions"]
    assert sorted(shards) == [(k, n) for k in range(1, n + 1)]
    outs = [build_parser().parse_args(c[1:]).out for c in calls()]
    assert len(set(outs)) == n  # one folder per shard, as the merge line expects
    merge_line = re.search(r"graphgrade merge (.*) --out", (DEPLOY / "k8s-indexed-job.yaml").read_text())
    assert merge_line and sorted(merge_line[1].split()) == sorted(map(str, outs))


def test_the_slurm_array_covers_every_shard_and_queues_the_merge(fake_bin, tmp_path):
    bin_dir, calls = fake_bin
    script = DEPLOY / "slurm-array.sh"
    first, last = map(int, re.search(r"#SBATCH --array=(\d+)-(\d+)", script.read_text()).groups())
    count = last - first + 1
    for task in range(first, last + 1):
        env = _env(bin_dir, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_COUNT=str(count), SLURM_ARRAY_JOB_ID="42")
        subprocess.run(["bash", str(script), str(tmp_path / "class"), str(tmp_path / "results")], env=env, check=True)
    assert sorted(_shards_of(calls())) == [(k, count) for k in range(1, count + 1)]
    sbatch = [c for c in calls() if c[0] == "sbatch"]
    assert len(sbatch) == 1 and "--dependency=afterok:42" in sbatch[0]
    wrap = next(a for a in sbatch[0] if a.startswith("--wrap="))[len("--wrap=") :].split()
    args = build_parser().parse_args(wrap[1:])
    assert args.command == "merge" and [str(s) for s in args.shards] == [
        str(tmp_path / "results" / f"shard-{k}") for k in range(1, count + 1)
    ]


def test_the_github_actions_matrix_covers_every_shard(fake_bin, tmp_path):
    bin_dir, calls = fake_bin
    workflow = yaml.safe_load((DEPLOY / "github-actions-grade.yml").read_text())
    grade_job = workflow["jobs"]["grade"]
    matrix = grade_job["strategy"]["matrix"]["shard"]
    runs = [
        s["run"]
        for s in grade_job["steps"]
        if "graphgrade grade" in s.get("run", "") or 'graphgrade)" grade' in s.get("run", "")
    ]
    assert len(runs) == 1
    for k in matrix:
        subprocess.run(
            ["bash", "-c", runs[0].replace("${{ matrix.shard }}", str(k))], env=_env(bin_dir), cwd=tmp_path, check=True
        )
    n = len(matrix)
    assert sorted(_shards_of(calls())) == [(k, n) for k in range(1, n + 1)]
    merge_run = next(s["run"] for s in workflow["jobs"]["merge"]["steps"] if "graphgrade merge" in s.get("run", ""))
    args = build_parser().parse_args(merge_run.split()[1:])
    assert [str(s) for s in args.shards] == [f"out/shard-{k}" for k in matrix]


# ------------------------------------------------------------------ merge trusts nothing it reads (issue 25, point 7)
def _shards_with_reports(tmp: Path, names: list[str]) -> list[Path]:
    """Two shards of ``names``, each submission's folder holding a real report.json and a page."""
    from test_reports_samples import passing_report

    from grader.judging.report_writing import write_report

    dirs = _fake_shards(tmp, 2, names, [1, 2])
    for d in dirs:
        for name in json.loads((d / "shard.json").read_text())["graded"]:
            (d / name).mkdir()
            write_report(passing_report(name), d / name / "report.json")
            (d / name / "report.html").write_text(f"<p>{name}</p>")
    return dirs


def _folder_of(dirs: list[Path], name: str) -> Path:
    return next(d / name for d in dirs if (d / name).is_dir() or (d / name).is_symlink())


def _grades(out: Path) -> dict[str, list[str]]:
    import csv

    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return {r[0]: r for r in rows[1:]}


NAMES = ["alice", "bob", "carol", "dave"]


def test_merge_follows_no_link(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    dirs = _shards_with_reports(tmp_path / "shards", NAMES)
    page = _folder_of(dirs, "alice") / "report.html"
    page.unlink()
    page.symlink_to(secret)  # a page that is a link: not copied, and alice's problem
    bob = _folder_of(dirs, "bob")
    elsewhere = tmp_path / "elsewhere"
    bob.rename(elsewhere)
    bob.symlink_to(elsewhere)  # a submission folder that is a link: not followed
    merged = {m.name: m for m in merge(dirs, tmp_path / "out")}
    out = tmp_path / "out"
    assert merged["alice"].problem and "a link" in merged["alice"].report.problem
    assert merged["bob"].problem and "not a folder" in merged["bob"].report.problem
    assert not merged["carol"].problem and not merged["dave"].problem
    found = [p for p in out.rglob("*") if p.is_file()]
    assert not any(p.is_symlink() for p in out.rglob("*"))
    assert not any("TOP-SECRET-CONTENT" in p.read_text(errors="replace") for p in found)
    assert (out / "summary.html").is_file() and set(_grades(out)) == set(NAMES)


def test_merge_reads_no_fifo_and_bounds_sizes(tmp_path, monkeypatch):
    from grader.commands import shard

    dirs = _shards_with_reports(tmp_path / "shards", NAMES)
    fifo = _folder_of(dirs, "alice") / "report.json"
    fifo.unlink()
    os.mkfifo(fifo)  # no writer: reading it would hang; it is refused before a byte is read
    monkeypatch.setattr(shard, "MAX_PAGE_BYTES", 1000)
    (_folder_of(dirs, "bob") / "report.html").write_text("x" * 1001)  # one byte over its bound
    merged = {m.name: m for m in merge(dirs, tmp_path / "out")}
    assert merged["alice"].problem and "not a regular file" in merged["alice"].report.problem
    assert merged["bob"].problem and "larger than the 1000 bytes" in merged["bob"].report.problem
    grades = _grades(tmp_path / "out")
    assert grades["alice"][-2] == "0" and grades["bob"][-2] == "0"  # nothing read is nothing scored
    assert not merged["carol"].problem and grades["carol"][-2] == grades["carol"][-1]


def test_merge_recounts_every_total_from_the_cases(tmp_path):
    """A report.json whose total (and a spec's column) says full marks while its cases say less
    is that submission's problem, and grades.csv holds its cases' totals."""
    from test_reports_samples import failing_report

    from grader.judging.report_writing import write_report

    dirs = _shards_with_reports(tmp_path / "shards", NAMES)
    honest = failing_report("alice")
    forged = replace(
        honest,
        score=honest.max_score,
        specs=tuple(replace(s, score=s.max_score) for s in honest.specs),
    )
    assert forged.score != honest.score
    write_report(forged, _folder_of(dirs, "alice") / "report.json")
    merged = {m.name: m for m in merge(dirs, tmp_path / "out")}
    alice = merged["alice"]
    assert alice.problem and "disagree with its cases" in alice.report.problem
    assert alice.report.score == honest.score
    grades = _grades(tmp_path / "out")
    assert float(grades["alice"][-2]) == honest.score != float(grades["alice"][-1])
    header = list(_grades_header(tmp_path / "out"))
    for spec in honest.specs:
        assert float(grades["alice"][header.index(spec.id)]) == spec.score
    assert "1 with a problem" in (tmp_path / "out" / "summary.html").read_text()
    copied = json.loads((tmp_path / "out" / "alice" / "report.json").read_text())
    assert copied["score"] == honest.score and "disagree with its cases" in copied["problem"]
    assert not merged["bob"].problem


def _grades_header(out: Path) -> list[str]:
    return (out / "grades.csv").read_text().splitlines()[0].split(",")


def test_merge_command_exits_3_and_names_the_problem(tmp_path):
    dirs = _shards_with_reports(tmp_path / "shards", NAMES)
    fifo = _folder_of(dirs, "carol") / "report.json"
    fifo.unlink()
    os.mkfifo(fifo)
    cmd = [sys.executable, "-m", "grader.commands.cli", "merge", *map(str, dirs), "--out", str(tmp_path / "out")]
    result = subprocess.run(cmd + ["--no-similarity"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 3, result.stderr
    assert "carol" in result.stderr and "not a regular file" in result.stderr and "Traceback" not in result.stderr


def test_a_shard_merged_into_itself_writes_through_no_link(tmp_path):
    dirs = _shards_with_reports(tmp_path / "shards", NAMES)
    victim = tmp_path / "victim.txt"
    victim.write_text("unchanged")
    report = _folder_of(dirs, "alice") / "report.json"
    report.unlink()
    report.symlink_to(victim)
    out = report.parent.parent  # --out is the shard holding alice
    merged = {m.name: m for m in merge(dirs, out)}
    assert merged["alice"].problem and victim.read_text() == "unchanged"
    assert not report.is_symlink() and "a link" in json.loads(report.read_text())["problem"]
