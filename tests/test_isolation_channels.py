"""Integrity round 3 (issue 25), end to end: no channel between two submissions graded at once,
and nothing of the grader's folders found by name from inside a submission.

One ``graphgrade grade --jobs 2`` run grades ``h50_lock_sender`` (publishes what its cases are
handed, hidden ones included, through record, OFD and ``flock`` locks on the standard library's
``os.py``), ``h51_lock_receiver`` (looks for them, and for inotify events on that file, in every
case, and prints what it finds into its visible output), ``h52_stat_hidden`` (asks ``stat`` for
the spec files' sizes and times) and the honest baseline. Without the seccomp rules the receiver
finds the sender's text (measured: ``LOCKLEAK:import`` and op chains in its report.json); with
them it finds nothing. No assertion depends on timing: whether the two workers overlap or not,
nothing of the sender may reach the receiver, and both may only score what the honest core does.

``tests/test_isolation_shared.py`` tests the same layers directly, with a control for each probe.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hostile"))
sys.path.insert(0, str(REPO / "tests"))
from materialize import materialize  # noqa: E402
from test_isolation_shared import needs_view  # noqa: E402

NAMES = ("h50_lock_sender", "h51_lock_receiver", "h52_stat_hidden", "h70_pid_sender", "h71_pid_receiver")
LEAK_MARK = "LOCKLEAK"
PID_LEAK_MARK = "PIDLEAK"
STUDENT_OUTPUTS = ("report.html", "results.json", "junit.xml", "report.json")
GRADE_TIMEOUT_S = 600  # the test's own guard against a grader that hangs


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("channels")
    subs = materialize(tmp / "subs", list(NAMES))
    out = tmp / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    done = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "grade", *(str(subs[n]) for n in ("honest", *NAMES))]
        + ["--out", str(out), "--jobs", "2", "--no-cache", "--timeout", "5", "--budget", "120"],
        cwd=tmp,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=GRADE_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    reports = {n: json.loads((out / n / "report.json").read_text()) for n in ("honest", *NAMES)}
    return {"out": out, "reports": reports}


def _text(report: dict) -> str:
    return report["output_tail"] + "".join(c["output_tail"] + c["message"] for c in report["cases"])


def _same_as_honest(batch: dict, name: str) -> None:
    report, honest = batch["reports"][name], batch["reports"]["honest"]
    assert honest["score"] == honest["max_score"]
    assert [(c["spec"], c["case"], c["status"]) for c in report["cases"]] == [
        (c["spec"], c["case"], c["status"]) for c in honest["cases"]
    ]


def test_no_lock_channel_between_two_workers_graded_at_once(batch):
    sender = _text(batch["reports"]["h50_lock_sender"])
    for kind in ("F_SETLK", "F_OFD_SETLK", "flock"):
        assert f"[hostile] lock {kind}: refused" in sender, kind
    assert "WORKED" not in sender
    receiver = _text(batch["reports"]["h51_lock_receiver"])
    for kind in ("F_GETLK", "F_OFD_GETLK", "flock"):
        assert f"[hostile] lock {kind}: refused" in receiver, kind
    assert "[hostile] inotify watch: refused" in receiver
    assert "[hostile] lock channel: found nothing" in receiver and "lock FOUND" not in receiver
    assert "WORKED" not in receiver
    for path in (batch["out"] / "h51_lock_receiver").rglob("*"):
        if path.is_file():
            assert LEAK_MARK not in path.read_text(errors="replace"), path
    for name in ("h50_lock_sender", "h51_lock_receiver"):
        _same_as_honest(batch, name)


@needs_view
def test_no_process_of_another_worker_exists_for_a_worker(batch):
    """Issue 31.3: a PID namespace per worker. The sender spells its cases (hidden ones too) into
    its children's nice values, scheduling policies and affinity masks; the receiver scans every
    pid below 32768 in every case. It finds no process but its own, its parent and its
    namespace's init (unconfined it found ~120, and decoded the sender's text:
    ``tests/test_isolation_shared.py::test_the_pid_channel_works_unconfined``)."""
    sender = _text(batch["reports"]["h70_pid_sender"])
    assert "[hostile] pid publish: WORKED" in sender  # its side of the channel was open
    receiver = _text(batch["reports"]["h71_pid_receiver"])
    scans = re.findall(r"\[hostile\] pid scan: (\d+) other processes found", receiver)
    assert scans and set(scans) == {"0"}, receiver[:2000]
    uids = re.findall(r"\[hostile\] uid scan: (\d+) other sandbox uids found", receiver)
    assert uids and set(uids) == {"0"}, receiver[:2000]
    assert "pid calls answered" not in receiver and "pid FOUND" not in receiver
    for name in STUDENT_OUTPUTS:
        text = (batch["out"] / "h71_pid_receiver" / name).read_text(errors="replace")
        assert PID_LEAK_MARK not in text, name
    for name in ("h70_pid_sender", "h71_pid_receiver"):
        _same_as_honest(batch, name)


@needs_view
def test_stat_from_inside_a_submission_finds_nothing_of_the_graders_folders(batch):
    text = _text(batch["reports"]["h52_stat_hidden"])
    assert "[hostile] stat: found nothing of 7 names" in text, text[:2000]
    assert "stat LEAK" not in text
    _same_as_honest(batch, "h52_stat_hidden")
