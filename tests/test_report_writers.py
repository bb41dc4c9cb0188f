"""The report writers (grader.commands.report_writers): a submission's files are written in a
forked process; what a write raises comes back as the submission's error; a writer that dies
costs nothing but speed; none is forked beside another thread; none is left behind."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from grader.commands.report_writers import ReportWriters, WriteFailed, writer_count
from grader.judging.results import Report


def _report(name: str) -> Report:
    return Report(submission=name, score=0.0, max_score=0.0, cases=(), specs=())


def write_pid(report: Report, out_dir: Path, hidden_visibility: str, judged: dict | None = None) -> None:
    """A stand-in for grade's writer: records which process wrote, and fails when told to."""
    if report.submission == "fails":
        raise RuntimeError("disk on fire")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "written").write_text(f"{os.getpid()} {report.submission} {hidden_visibility}")


def _written(out: Path) -> tuple[int, str, str]:
    pid, name, visibility = (out / "written").read_text().split()
    return int(pid), name, visibility


def _gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True  # reaped: neither running nor a zombie
    return False


def test_reports_are_written_in_the_writers_and_every_writer_ends(tmp_path):
    writers = ReportWriters(2, write_pid)
    pids = [pid for pid, _ in list(writers._tokens.queue)]
    assert writers.forked == 2 and len(set(pids)) == 2 and os.getpid() not in pids
    for i in range(6):
        writers.write(_report(f"s{i}"), tmp_path / f"s{i}", "after_published")
    writers.close()
    seen = {_written(tmp_path / f"s{i}") for i in range(6)}
    assert {pid for pid, _, _ in seen} <= set(pids)
    assert {(name, visibility) for _, name, visibility in seen} == {(f"s{i}", "after_published") for i in range(6)}
    assert all(_gone(pid) for pid in pids)
    writers.write(_report("late"), tmp_path / "late", "hidden")  # after close: written here
    assert _written(tmp_path / "late")[0] == os.getpid()


def test_what_a_write_raises_comes_back_with_its_type_and_the_writer_goes_on(tmp_path):
    writers = ReportWriters(1, write_pid)
    try:
        with pytest.raises(WriteFailed, match="disk on fire") as raised:
            writers.write(_report("fails"), tmp_path / "fails", "hidden")
        assert raised.value.type_name == "RuntimeError"
        writers.write(_report("next"), tmp_path / "next", "hidden")
        assert _written(tmp_path / "next")[0] != os.getpid()
    finally:
        writers.close()


def test_a_writer_that_dies_costs_only_speed(tmp_path):
    writers = ReportWriters(1, write_pid)
    ((pid, _),) = list(writers._tokens.queue)
    os.kill(pid, signal.SIGKILL)
    try:
        for name in ("a", "b"):
            writers.write(_report(name), tmp_path / name, "hidden")
            assert _written(tmp_path / name)[0] == os.getpid()  # written here, and nothing lost
    finally:
        writers.close()
    assert _gone(pid)


def test_no_writer_is_forked_beside_another_thread(tmp_path):
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        writers = ReportWriters(2, write_pid)
        assert writers.forked == 0
        writers.write(_report("here"), tmp_path / "here", "hidden")
        assert _written(tmp_path / "here")[0] == os.getpid()
        writers.close()
    finally:
        release.set()
        other.join()


def test_one_writer_per_worker_slot_and_none_for_one_submission():
    assert writer_count(2, 40) == 2
    assert writer_count(4, 3) == 4
    assert writer_count(2, 1) == 0
