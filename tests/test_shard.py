"""Shards and merge (grader.commands.shard): each submission in exactly one shard whatever the order,
two shards merged equal one run, merge refuses shards that do not belong together, and the
batch-engine examples in deploy/ run the commands the CLI accepts, covering shards 1..N."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
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
