"""Where the workstreams meet: defects a review of the merged tree found, each pinned here.

The bundle's scripts, the cache key, the shard merge, the LMS export,
the similarity and PrairieLearn options, and the reserved output names.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]


def graphgrade(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_the_gradescope_setup_leaves_no_readable_reference():
    from grader.commands.bundles import RUN_AUTOGRADER, SETUP_SH

    assert 'rm -rf "$ROOT/source/kit"' in SETUP_SH  # the unpacked source holds the reference
    assert SETUP_SH.index("pip install") < SETUP_SH.index('rm -rf "$ROOT/source/kit"')
    assert 'chmod -R go-rwx "$SRC"' in RUN_AUTOGRADER
    assert "for pkg in reference specs" in RUN_AUTOGRADER  # installed copies root-only too
    assert RUN_AUTOGRADER.index("go-rwx") < RUN_AUTOGRADER.index(
        'graphgrade grade "$ROOT/submission"'
    )  # before any student code (tests/test_bundle_end_to_end.py runs both scripts)


def test_the_cache_key_holds_the_limits_and_the_case_s_visibility():
    from grader.run.cache import case_key, runtime_key
    from grader.run.runner import RunSettings

    base = RunSettings()
    keys = {runtime_key(base)}
    for change in (
        {"case_timeout_s": 1.0},
        {"import_timeout_s": 2.0},
        {"submission_budget_s": 9.0},
        {"landlock": False},
        {"tail_bytes": 10},
    ):
        keys.add(runtime_key(dataclasses.replace(base, **change)))
    assert len(keys) == 6  # each limit is part of what a worker observed
    assert case_key("r", "s", b"steps", hidden=True) != case_key("r", "s", b"steps", hidden=False)


def test_merge_refuses_names_that_would_leave_the_output_folder(tmp_path):
    from grader.commands.shard import merge

    shard = tmp_path / "s1"
    shard.mkdir()
    (shard / "shard.json").write_text(
        json.dumps({"format": 1, "shard": 1, "of": 1, "submissions": ["../escape"], "graded": ["../escape"]})
    )
    with pytest.raises(UsageError, match="not a submission name"):
        merge([shard], tmp_path / "out")
    assert not (tmp_path / "escape").exists()


def test_export_says_what_is_wrong_with_a_roster_in_one_line(tmp_path):
    from grader.commands.lms_export import read_roster

    roster = tmp_path / "gradebook.csv"
    roster.write_text('Student,ID,SIS Login ID\n"' + "x" * 200_000 + '",1,a\n')
    with pytest.raises(UsageError, match="not a readable CSV"):
        read_roster(roster, ["Student", "ID", "SIS Login ID"])


@pytest.mark.parametrize("value", ["0", "-5", "inf", "nan"])
def test_export_refuses_points_possible_that_would_ruin_every_grade(value):
    import argparse
    from types import SimpleNamespace

    from grader.commands.lms_export import _points_possible

    no_row = SimpleNamespace(points_possible={})
    with pytest.raises(UsageError, match="--points-possible"):
        _points_possible(argparse.Namespace(points_possible=float(value)), no_row, "Lab (1)")
    with pytest.raises(UsageError, match="Points Possible"):  # the same number in the gradebook's row
        _points_possible(
            argparse.Namespace(points_possible=None), SimpleNamespace(points_possible={"Lab (1)": value}), "Lab (1)"
        )
    assert (
        _points_possible(
            argparse.Namespace(points_possible=None), SimpleNamespace(points_possible={"Lab (1)": "20"}), "Lab (1)"
        )
        == 20
    )


def test_a_missing_similarity_template_is_an_argument_error(tmp_path):
    done = graphgrade(
        "similarity",
        str(ROOT / "reference"),
        str(ROOT / "tests" / "correct_variants" / "minimal"),
        "--out",
        str(tmp_path),
        "--template",
        str(tmp_path / "nope.py"),
    )
    assert done.returncode == 2 and "nope.py: no such file or directory" in done.stderr


@pytest.mark.parametrize(
    "args", [("prairielearn", "--timeout", "0"), ("prairielearn", "--budget", "-1"), ("audit", "--only", "reference")]
)
def test_bad_option_values_are_refused_before_anything_runs(args):
    done = graphgrade(*args)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_output_names_never_take_a_batch_file_s_name():
    from grader.commands.grade import unique_names

    names = unique_names([Path(f"/subs/{n}") for n in ("shard.json", "similarity.json", "summary.html", "alice")])
    assert names[:3] == ["shard.json-2", "similarity.json-2", "summary.html-2"] and names[3] == "alice"
