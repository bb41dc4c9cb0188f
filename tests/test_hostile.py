"""The hostile suite: grade every submission of ``tests/hostile/`` in ONE ``graphgrade grade``
run, beside an honest and a buggy baseline, exactly as CI and a Gradescope container
do (as root), and check, for each hostile submission:

* the batch finishes, within its time budget, exit code 0 (the grader survived);
* the honest submission's report is identical to its report graded alone;
* the hostile submission gets no point it did not earn (see ``EXPECT``);
* nothing is written outside the sandbox (OUT's other entries, the specs, the
  submissions' sources, the repository and package folders, the working directory,
  /tmp and $HOME keep what they had; no fake results file appears anywhere);
* no process is left behind (this test process is a child subreaper, so anything that
  escaped the grader would land here), and nothing reached the network listeners;
* nothing of the specs, the reference solution or the grader's environment appears in
  any output.

``SECURITY.md`` names the test functions below for each claim it makes.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hostile"))
from materialize import hostile_names, materialize  # noqa: E402

from grader.run.worker import sandbox  # noqa: E402
from grader.run.worker.sandbox import Limits  # noqa: E402

TIMEOUT, BUDGET, JOBS = 2, 20, 4
GRADE_TIMEOUT_S = 600  # the test's own guard against a grader that hangs


def batch_wall_limit(count: int) -> float:
    """The longest a batch of ``count`` submissions may take when every one stays within its
    budget: JOBS at a time, each using all of it (the batch grew with the attacks, and the
    machine may be busy: a fixed figure measured once is not a bound)."""
    return math.ceil(count / JOBS) * BUDGET


SLACK_S = 3.0
UID_RANGE = range(61000, 62000)
PORT = 47391  # h22_network aims here
ABSTRACT = "\0graphgrade-hostile-test"
MARKER = "HOSTILE-MARKER-3b9d"
FAKE_NAMES = ("results.json", "report.json", "HOSTILE_WAS_HERE.txt")
TAIL_LIMIT = 4000 + 200
REFERENCE_LINE = "Global tally of kernel launches, standing in for CPU launch overhead."
TIMING_KEYS = ("duration_s",)
IS_ROOT = os.geteuid() == 0
LANDLOCK = sandbox.landlock_abi()
# Defended only where Landlock confines reads and writes (see SECURITY.md, "What is NOT
# defended", 3): without it these attacks succeed on world-readable or world-writable files.
NEEDS_LANDLOCK = ("h19_read_specs", "h20_open_by_handle", "h21_import_reference")


def fusion(case: dict) -> bool:
    return case["tag"] == "fusion"


def notebook_answers(case: dict) -> bool:
    return case["spec"] == "notebook-answers"


def fresh_buffer(case: dict) -> bool:
    """A case the fresh-buffer-on-replay bug fails: it checks that an op is handed, on replay, the
    buffer it was handed at capture."""
    return any(check["what"].endswith("is handed the buffer it was handed at capture") for check in case["checks"])


def fresh_buffer_or_answers(case: dict) -> bool:
    """The fresh-buffer bug's cases, and the notebook answers: the honest core's cited lines, which
    a runner of the hostile's own making never runs on replay."""
    return fresh_buffer(case) or notebook_answers(case)


def empty_list_case(case: dict) -> bool:
    return case["spec"] == "fusion-edge" and case["case"] == "empty-list"


@dataclass(frozen=True)
class Expect:
    """What a hostile submission may score.

    zero:   nothing at all;
    broken: the ``affected`` cases must not pass, every other case must pass (as the honest core's);
    same:   every case passes, as the honest core's (its attack must change nothing);
    earned: it does the lab; no more than the honest score (its attack may cost its own cases);
    cheat:  it starts from the buggy core; no more than the buggy baseline, never full marks.
    """

    kind: str
    affected: Callable[[dict], bool] | None = None


EXPECT: dict[str, Expect] = {
    "h01_exit_at_import": Expect("zero"),
    "h02_exit_in_case": Expect("broken", fusion),
    "h03_os_exit": Expect("broken", fusion),
    "h04_infinite_loop": Expect("broken", empty_list_case),
    "h05_sleep_at_import": Expect("zero"),
    "h06_memory_hog": Expect("broken", fusion),
    "h07_output_flood": Expect("same"),
    "h08_segfault": Expect("broken", fusion),
    "h09_recursion": Expect("broken", fusion),
    "h10_background_case": Expect("same"),
    "h11_background_import": Expect("earned"),
    "h12_kill_parent": Expect("broken", fusion),
    "h13_fake_results": Expect("same"),
    "h14_sabotage_others": Expect("same"),
    # In --isolation module (the default) a case runs in the process holding the result pipe, so
    # the later cases it pre-answers may be charged too (its own cases only; test_isolation_modes
    # leaves it out for that reason). With --isolation process exactly the fusion cases fail.
    "h15_fake_frames_case": Expect("earned"),
    "h16_fake_frames_import": Expect("zero"),
    "h17_monkeypatch": Expect("cheat"),
    "h18_lying_ndarray": Expect("cheat"),
    "h19_read_specs": Expect("cheat"),
    "h20_open_by_handle": Expect("cheat"),
    "h21_import_reference": Expect("cheat"),
    "h22_network": Expect("same"),
    "h23_env_and_stdin": Expect("same"),
    "h24_fork_bomb": Expect("earned"),
    "h25_disk_fill": Expect("earned"),
    "h40_ipc_writer": Expect("same"),
    "h41_ipc_reader": Expect("same"),
    "h42_surrogate_import": Expect("zero"),
    "h43_ansi_import": Expect("zero"),
    "h44_bidi_output": Expect("broken", fusion),
    "h45_forged_shape": Expect("broken", fusion),
    "h46_many_dirs": Expect("zero"),
    "h47_deep_dirs": Expect("zero"),
    "h48_keyring_userns": Expect("same"),
    "h49_forged_structure": Expect("same"),  # and flagged: test_forged_structure_is_flagged_not_penalised
    # tests/test_isolation_channels.py grades these three together with --jobs 2
    "h50_lock_sender": Expect("same"),
    "h51_lock_receiver": Expect("same"),
    "h52_stat_hidden": Expect("same"),
    "h53_forged_op_class": Expect("cheat"),  # and flagged: test_forged_op_class_is_flagged_and_caught
    "h54_zip_forgery": Expect("cheat"),  # and flagged: test_zip_forgery_is_flagged_and_not_importable
    "h80_answers_markup": Expect("broken", notebook_answers),  # shown inert: tests/test_answers_reports.py
    # their attack is the folder the grader runs in: tests/test_trusted_path.py grades them there
    "h55_shadow_multiprocessing": Expect("cheat"),
    "h56_shadow_reference": Expect("cheat"),
    "h57_checkout_specs": Expect("cheat"),
    # issue 31: each hides the fresh-buffer-on-replay bug; tests/test_forgeries.py compares each with
    # the bug unforged, in both isolation modes, and checks their flags
    "h60_lying_address": Expect("broken", fresh_buffer_or_answers),  # the op records the real address
    "h61_patch_through_type_alias": Expect("cheat"),  # the patch is seen by the op's own call
    "h62_computed_log_name": Expect("broken", fresh_buffer_or_answers),  # no name reaches the log
    "h63_encoded_exec": Expect("cheat"),  # flagged three ways; its class patch is seen
    "h70_pid_sender": Expect("same"),
    "h71_pid_receiver": Expect("same"),
    "h72_memory_each_case": Expect("same"),  # and the same verdicts in both modes: test_isolation_modes
}

# Safe to run without root (no uid of its own, so nothing here may rely on one) and without
# Landlock's signal scope (kill(-1) or killing "grader-like" pids would then reach this test).
NON_ROOT_SUBSET = (
    "h01_exit_at_import",
    "h02_exit_in_case",
    "h03_os_exit",
    "h07_output_flood",
    "h08_segfault",
    "h10_background_case",
    "h11_background_import",
    "h15_fake_frames_case",
    "h16_fake_frames_import",
    "h17_monkeypatch",
    "h18_lying_ndarray",
    "h21_import_reference",
    "h23_env_and_stdin",
    "h42_surrogate_import",
    "h43_ansi_import",
    "h44_bidi_output",
    "h45_forged_shape",
    "h46_many_dirs",
    "h47_deep_dirs",
    "h49_forged_structure",
    "h50_lock_sender",
    "h51_lock_receiver",
    "h53_forged_op_class",
    "h54_zip_forgery",
    "h80_answers_markup",
    "h55_shadow_multiprocessing",
    "h56_shadow_reference",
    "h57_checkout_specs",
    "h60_lying_address",
    "h61_patch_through_type_alias",
    "h62_computed_log_name",
    "h63_encoded_exec",
) + (("h12_kill_parent",) if sandbox.landlock_abi() >= 6 else ())


def test_every_hostile_submission_has_an_expectation():
    assert sorted(EXPECT) == hostile_names()
    assert len(EXPECT) >= 15
    assert set(NON_ROOT_SUBSET) <= set(EXPECT)


# ------------------------------------------------------------------ the watch kept around a run
_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_CHILD_SUBREAPER = 36


def _children() -> set[int]:
    me = os.getpid()
    found: set[int] = set()
    for task in os.listdir(f"/proc/{me}/task"):
        try:
            found.update(int(p) for p in Path(f"/proc/{me}/task/{task}/children").read_text().split())
        except OSError:
            pass
    return found


def _reap_zombies() -> None:
    for pid in _children():
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                os.waitpid(pid, os.WNOHANG)
        except (OSError, ChildProcessError):
            pass


def _descends_from(pid: int, ancestor: int) -> bool:
    for _ in range(64):
        if pid == ancestor:
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid <= 1:
            return False
    return False


def _sandbox_processes_of_ours() -> list[str]:
    """Live processes of a sandbox uid that descend from this test process."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry.name}/status").read_text()
        except OSError:
            continue
        uid = int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))
        state = re.search(r"^State:\s+(\S)", status, re.M).group(1)
        if uid in UID_RANGE and state not in "ZX" and _descends_from(int(entry.name), os.getpid()):
            found.append(f"pid {entry.name} uid {uid}")
    return found


def _tree(path: Path) -> dict[str, tuple[int, str]]:
    """Every file beneath ``path``: relative name -> (mtime_ns, sha256); folders too, as
    ``name/`` (h46 makes 100,000 of them and h47 nests 1,500: walked with a stack)."""
    found: dict[str, tuple[int, str]] = {}
    stack = [""] if path.exists() else []
    while stack:
        rel = stack.pop()
        with os.scandir(path / rel if rel else path) as listing:
            entries = [
                (e.name, e.path, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False)) for e in listing
            ]
        for name, full, is_dir, is_file in entries:
            child = f"{rel}/{name}" if rel else name
            if is_dir:
                found[child + "/"] = (0, "dir")
                stack.append(child)
            elif is_file:
                with open(full, "rb") as f:
                    found[child] = (os.stat(full).st_mtime_ns, hashlib.sha256(f.read()).hexdigest())
    return found


def _fake_named(dirs: list[Path]) -> set[str]:
    """Files with a fake-results name, or holding the marker, directly in these folders."""
    found = set()
    for d in dirs:
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            if e.name in FAKE_NAMES:
                found.add(os.path.join(d, e.name))
            elif e.is_file(follow_symlinks=False) and e.stat(follow_symlinks=False).st_size < 1 << 20:
                try:
                    if MARKER.encode() in Path(e.path).read_bytes():
                        found.add(e.path)
                except OSError:
                    pass
    return found


def _watched_dirs() -> list[Path]:
    import numpy

    import grader
    import reference
    import specs

    site = Path(numpy.__file__).resolve().parents[1]
    return [
        REPO,
        REPO / "grader",
        REPO / "grader" / "run" / "worker",
        Path(specs.__file__).resolve().parent,
        Path(reference.__file__).resolve().parent,
        Path(grader.__file__).resolve().parent,
        site,
        site / "grader",
        Path("/tmp"),
        Path.home(),
    ]


class Listeners:
    """A TCP and a UDP socket on 127.0.0.1:PORT and an abstract Unix socket, for h22_network."""

    def __init__(self) -> None:
        self.sockets: list[socket.socket] = []
        for family, kind, address in (
            (socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", PORT)),
            (socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", PORT)),
            (socket.AF_UNIX, socket.SOCK_STREAM, ABSTRACT),
        ):
            s = socket.socket(family, kind)
            try:
                s.bind(address)
            except OSError:
                s.close()
                continue
            if kind == socket.SOCK_STREAM:
                s.listen(16)
            s.setblocking(False)
            self.sockets.append(s)

    def what_arrived(self) -> list[str]:
        arrived = []
        for s in self.sockets:
            try:
                if s.type == socket.SOCK_STREAM:
                    conn, _ = s.accept()
                    conn.close()
                    arrived.append(f"a connection to {s.getsockname()!r}")
                else:
                    data = s.recv(1024)
                    arrived.append(f"a datagram {data[:40]!r}")
            except (BlockingIOError, OSError):
                pass
        return arrived

    def close(self) -> None:
        for s in self.sockets:
            s.close()


@dataclass
class Batch:
    out: Path
    subs: dict[str, Path]
    specs: Path
    rc: int
    wall_s: float
    stderr: str
    reports: dict[str, dict]
    alone: dict
    leftover_children: set[int]
    leftover_sandbox: list[str]
    arrived: list[str]
    trees_before: dict[str, dict]
    trees_after: dict[str, dict]
    fakes_before: set[str]
    fakes_after: set[str]
    cwd: Path
    spec_canary: str
    env_canary: str
    stdout: str = ""
    ipc_before: frozenset = frozenset()
    ipc_after: frozenset = frozenset()


def _grade(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "grade", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,  # kept open and silent: a worker that inherited it would block on it
        capture_output=True,
        text=True,
        timeout=GRADE_TIMEOUT_S,
    )


def run_batch(tmp: Path, names: list[str]) -> Batch:
    import specs as specs_package

    subs = materialize(tmp / "subs", names)
    spec_canary = f"SPEC-CANARY-{uuid.uuid4().hex}"
    env_canary = f"ENV-CANARY-{uuid.uuid4().hex}"
    specs = tmp / "specs"
    shutil.copytree(Path(specs_package.__file__).resolve().parent, specs, ignore=shutil.ignore_patterns("__pycache__"))
    for yaml_file in specs.glob("*.yaml"):
        yaml_file.write_text(
            yaml_file.read_text() + f"\n# {spec_canary} (hidden-case canary: must never leave the grader)\n"
        )
    out = tmp / "out"
    (out / "previous").mkdir(parents=True)
    (out / "previous" / "report.json").write_text('{"an earlier run": true}')
    cwd = tmp / "cwd"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["GRAPHGRADE_HOSTILE_CANARY"] = env_canary
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    watched = {"subs": tmp / "subs", "specs": specs, "out": out, "cwd": cwd}
    trees_before = {k: _tree(v) for k, v in watched.items()}
    fakes_before = _fake_named(_watched_dirs())

    listeners = Listeners()
    children_before = _children()
    ipc_before = ipc_objects()
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # whatever escapes the grader re-parents here
    try:
        started = time.monotonic()
        args = [str(subs[n]) for n in ["honest", "buggy", *names]]
        done = _grade(
            [
                *args,
                "--out",
                str(out),
                "--specs",
                str(specs),
                "--timeout",
                str(TIMEOUT),
                "--budget",
                str(BUDGET),
                "--jobs",
                str(JOBS),
            ],
            cwd,
            env,
        )
        wall = time.monotonic() - started
        time.sleep(0.3)  # let anything that escaped show itself
        _reap_zombies()
        leftover_children = _children() - children_before
        leftover_sandbox = _sandbox_processes_of_ours()
        for pid in leftover_children:  # do not leave them running past this test
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except (OSError, ChildProcessError):
                pass
    finally:
        _libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    ipc_after = ipc_objects()
    arrived = listeners.what_arrived()
    listeners.close()
    trees_after = {k: _tree(v) for k, v in watched.items()}
    fakes_after = _fake_named(_watched_dirs())

    reports = {}
    for name in ["honest", "buggy", *names]:
        path = out / name / "report.json"
        reports[name] = json.loads(path.read_text()) if path.exists() else {}
    alone_out = tmp / "alone"
    alone_done = _grade(
        [
            str(subs["honest"]),
            "--out",
            str(alone_out),
            "--specs",
            str(specs),
            "--timeout",
            str(TIMEOUT),
            "--budget",
            str(BUDGET),
        ],
        cwd,
        env,
    )
    assert alone_done.returncode == 0, alone_done.stderr
    alone = json.loads((alone_out / "honest" / "report.json").read_text())
    return Batch(
        out,
        subs,
        specs,
        done.returncode,
        wall,
        done.stderr,
        reports,
        alone,
        leftover_children,
        leftover_sandbox,
        arrived,
        trees_before,
        trees_after,
        fakes_before,
        fakes_after,
        cwd,
        spec_canary,
        env_canary,
        done.stdout,
        ipc_before,
        ipc_after,
    )


def ipc_objects() -> frozenset[str]:
    """Every System V IPC object of this (the grader's) IPC namespace, as ``ipcs`` lists them."""
    found = set()
    for kind in ("shm", "msg", "sem"):
        try:
            rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        found.update(f"{kind} {' '.join(row.split()[:3])}" for row in rows)
    return frozenset(found)


# ------------------------------------------------------------------ checks shared by both variants
def _without_timing(value):
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def check_batch_finished(batch: Batch, count: int) -> None:
    assert batch.rc == 0, f"the grader exited {batch.rc} (killed?):\n{batch.stderr[-3000:]}"
    assert len(batch.reports) == count
    assert batch.wall_s < batch_wall_limit(count), f"{batch.wall_s:.0f} s for {count} submissions"
    for name, report in batch.reports.items():
        assert report, f"no report for {name}"
        assert report["duration_s"] <= BUDGET + SLACK_S, (
            f"{name} ran {report['duration_s']:.1f} s, past its {BUDGET} s budget"
        )


def check_honest_unchanged(batch: Batch) -> None:
    assert batch.reports["honest"]["score"] == batch.reports["honest"]["max_score"]
    assert _without_timing(batch.reports["honest"]) == _without_timing(batch.alone)


def _needs_landlock(name: str) -> None:
    if name in NEEDS_LANDLOCK and LANDLOCK < 1:
        pytest.skip(f"{name}: defended only with Landlock, which this kernel lacks (SECURITY.md)")


def check_points(batch: Batch, name: str) -> None:
    _needs_landlock(name)
    report, honest, buggy = batch.reports[name], batch.reports["honest"], batch.reports["buggy"]
    expect = EXPECT[name]
    passed = {(c["spec"], c["case"]) for c in report["cases"] if c["status"] == "passed"}
    assert passed <= {(c["spec"], c["case"]) for c in honest["cases"] if c["status"] == "passed"}
    if expect.kind == "zero":
        assert report["score"] == 0 and not passed, f"{name}: {report['score']} points"
    elif expect.kind in ("broken", "same"):
        affected = expect.affected or (lambda case: False)
        cases = _in_run_order(report["cases"])
        # Each worker a submission ends is restarted (a fresh import) at the submission's own cost,
        # so on a busy machine its time budget may run out: from then on every case is "not run",
        # and a case may run past its timeout. Load decides which: such a case may fail (it earns
        # nothing), never pass where it should not; every other case must be as expected.
        ran = next((i for i, c in enumerate(cases) if _budget_used_up(c)), len(cases))
        assert all(_budget_used_up(c) for c in cases[ran:]), f"{name}: the budget ran out, then a case ran"
        wrong = [
            f"{c['spec']}/{c['case']}: {c['status']}"
            for c in cases[:ran]
            if (c["status"] == "passed") == affected(c) and not (c["status"] == "timeout" and not affected(c))
        ]
        assert not wrong, f"{name}: cases graded other than expected: {wrong[:8]}"
        assert not any(c["status"] == "passed" and affected(c) for c in cases[ran:])
    elif expect.kind == "earned":
        assert report["score"] <= honest["score"]
    elif expect.kind == "cheat":
        assert report["score"] <= buggy["score"] < report["max_score"], (
            f"{name} scored {report['score']} > buggy {buggy['score']}"
        )
        assert passed <= {(c["spec"], c["case"]) for c in buggy["cases"] if c["status"] == "passed"}
    else:  # pragma: no cover
        raise AssertionError(expect.kind)


def _in_run_order(cases: list[dict]) -> list[dict]:
    """A report's cases in the order the grader ran them: every visible spec's cases before any
    other (grader/commands/grade.py: run_order), while the report keeps the specs' own order
    (each spec file holds a visible spec, then a hidden one). Read in the report's order, a
    visible case listed after a hidden one whose budget ran out looked like a case run after it."""
    return [c for c in cases if c["visibility"] == "visible"] + [c for c in cases if c["visibility"] != "visible"]


def _budget_used_up(case: dict) -> bool:
    return case["status"] == "timeout" and "used up its" in case["message"] and "time budget" in case["message"]


def check_nothing_written_outside(batch: Batch) -> None:
    for key in ("subs", "specs", "cwd"):
        assert batch.trees_after[key] == batch.trees_before[key], f"{key} changed"
    before, after = batch.trees_before["out"], batch.trees_after["out"]
    assert after["previous/report.json"] == before["previous/report.json"]
    for rel in after:
        top = rel.split("/", 1)[0]
        assert top in batch.reports or top in (
            "previous",
            "summary.html",
            "grades.csv",
            "answers.csv",
            "similarity.json",
            "similarity.html",
        ), f"unexpected file OUT/{rel}"
    for path in batch.out.rglob("*"):
        if (
            path.is_file() and path.name != "similarity.html"
        ):  # staff's side-by-side page quotes the sources, marker constant included
            assert MARKER not in path.read_text(errors="replace"), f"a hostile submission's fake landed in {path}"
    new_fakes = batch.fakes_after - batch.fakes_before
    if LANDLOCK < 1:  # world-writable folders are open to any uid without Landlock (SECURITY.md)
        new_fakes = {p for p in new_fakes if not p.startswith(("/tmp/", "/var/tmp/", "/dev/shm/"))}
    assert not new_fakes, f"fake results files appeared: {sorted(new_fakes)}"


def check_no_process_left(batch: Batch) -> None:
    assert not batch.leftover_children, (
        f"processes left behind (re-parented to the test): {sorted(batch.leftover_children)}"
    )
    assert not batch.leftover_sandbox, f"sandbox processes still running: {batch.leftover_sandbox}"


def check_nothing_leaked(batch: Batch, name: str) -> None:
    _needs_landlock(name)
    forbidden = [
        batch.spec_canary,
        batch.env_canary,
        "yaml-language-server",
        "visibility: hidden",
        REFERENCE_LINE,
        "STOLE the reference",
    ]
    for path in (batch.out / name).rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            for secret in forbidden:
                assert secret not in text, f"{name}: {secret[:40]!r} appears in {path.name}"


def check_output_capped(batch: Batch, name: str) -> None:
    report = batch.reports[name]
    assert len(report["output_tail"]) <= TAIL_LIMIT
    for case in report["cases"]:
        assert len(case["output_tail"]) <= TAIL_LIMIT
    assert (batch.out / name / "report.json").stat().st_size < 4 << 20


# ------------------------------------------------------------------ as root: the whole hostile batch
@pytest.fixture(scope="module")
def root_batch(tmp_path_factory) -> Batch:
    if not IS_ROOT:
        pytest.skip(
            "the full hostile batch runs as root (as in CI and a Gradescope container); see test_hostile_subset_without_root"
        )
    return run_batch(tmp_path_factory.mktemp("hostile"), hostile_names())


def test_batch_finishes_in_budget_and_grader_survives(root_batch):
    check_batch_finished(root_batch, len(EXPECT) + 2)


def test_honest_submission_unaffected(root_batch):
    check_honest_unchanged(root_batch)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_no_unearned_points(root_batch, name):
    check_points(root_batch, name)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_no_leak_and_capped_output(root_batch, name):
    check_nothing_leaked(root_batch, name)
    check_output_capped(root_batch, name)


def test_nothing_written_outside_sandbox(root_batch):
    check_nothing_written_outside(root_batch)


def test_no_process_left_behind(root_batch):
    check_no_process_left(root_batch)


def test_network_unreachable(root_batch):
    assert not root_batch.arrived, f"reached the test's listeners: {root_batch.arrived}"


def _private_tmpfs_possible() -> bool:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - a throwaway probe
        os._exit(0 if sandbox._libc.unshare(sandbox.CLONE_NEWNS) == 0 else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def test_disk_fill_capped_by_private_tmpfs(root_batch):
    if not _private_tmpfs_possible():
        pytest.skip(
            "no CAP_SYS_ADMIN (a restricted container): no private tmpfs, the container's disk quota is the limit"
        )
    tails = [c["output_tail"] for c in root_batch.reports["h25_disk_fill"]["cases"]]
    written = [int(m) for tail in tails for m in re.findall(r"\[hostile\] disk: wrote (\d+)", tail)]
    assert written, "h25_disk_fill printed nothing (its fusion cases did not run?)"
    assert max(written) <= Limits().scratch_bytes, f"wrote {max(written)} bytes: the scratch tmpfs did not cap it"


def test_background_processes_die_with_their_case(root_batch):
    tails = "".join(c["output_tail"] for c in root_batch.reports["h10_background_case"]["cases"])
    assert "daemon via double fork: WORKED" in tails  # they were started...
    assert "still alive after its case" not in tails  # ...and never got to act


def test_case_cannot_reach_the_workers_pipes(root_batch):
    tails = "".join(c["output_tail"] for c in root_batch.reports["h15_fake_frames_case"]["cases"])
    assert "written to the worker's reopened fds []" in tails
    assert re.search(r"reopened fds \[\d", tails) is None


def test_fork_bomb_stopped_by_process_limit(root_batch):
    tails = "".join(c["output_tail"] for c in root_batch.reports["h24_fork_bomb"]["cases"])
    assert "fork refused" in tails and "forked all" not in tails


def test_spec_readers_found_nothing(root_batch):
    for name in ("h19_read_specs", "h20_open_by_handle"):
        _needs_landlock(name)
        messages = " ".join(c["message"] for c in root_batch.reports[name]["cases"] if not c["redacted"])
        assert "LEAK nothing found" in messages, f"{name} read something: {messages[:500]}"


# ------------------------------------------------------------------ integrity round 2 (issue 11)
IPC_SECRET = "IPC-SECRET-5d1e"
INVISIBLE = ("\u202e", "\u2066", "\u061c", "\u200b", "\u2060", "\ufeff")
STUDENT_AND_STAFF_FILES = ("report.html", "report.json", "results.json", "junit.xml")


def _all_text(report: dict) -> str:
    return (
        report["output_tail"]
        + report.get("problem", "")
        + "".join(c["output_tail"] + c["message"] for c in report["cases"])
    )


def test_ipc_is_not_shared_between_submissions(root_batch):
    """h40 writes a secret into System V shm, a queue and a semaphore; h41, graded in the same
    batch, looks in every case and finds nothing."""
    writer = _all_text(root_batch.reports["h40_ipc_writer"])
    assert "ipc shm secret: WORKED" in writer  # the writer did write (in its own namespace)
    reader = _all_text(root_batch.reports["h41_ipc_reader"])
    assert "[hostile] ipc: found nothing" in reader and "ipc FOUND" not in reader
    for path in (root_batch.out / "h41_ipc_reader").rglob("*"):
        assert IPC_SECRET not in path.read_text(errors="replace"), path


def test_ipc_not_found_by_a_later_run(root_batch, tmp_path):
    """Graded again alone after the batch (a later run, the same sandbox uids), the reader still
    finds nothing: nothing of the writer outlived its worker."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = str(REPO)
    done = _grade(
        [
            str(root_batch.subs["h41_ipc_reader"]),
            "--out",
            str(tmp_path / "out"),
            "--timeout",
            str(TIMEOUT),
            "--budget",
            str(BUDGET),
        ],
        tmp_path,
        env,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "out" / "h41_ipc_reader" / "report.json").read_text())
    text = _all_text(report)
    assert "[hostile] ipc: found nothing" in text and "ipc FOUND" not in text and IPC_SECRET not in text


def test_no_ipc_object_left_behind(root_batch):
    """After the run, ``ipcs`` lists nothing that was not there before (h40 left four 64 MiB
    segments, a queue and a semaphore set in its own namespace)."""
    assert root_batch.ipc_after <= root_batch.ipc_before, sorted(root_batch.ipc_after - root_batch.ipc_before)


def test_keyring_and_new_namespaces_refused(root_batch):
    text = _all_text(root_batch.reports["h48_keyring_userns"])
    for call in (
        "add_key",
        "request_key",
        "keyctl",
        "unshare(CLONE_NEWUSER)",
        "clone(CLONE_NEWUSER)",
        "clone(CLONE_PARENT)",
        "clone3",
        "setns",
    ):
        assert f"[hostile] {call}: refused" in text, call
    assert "WORKED" not in text
    assert "clone3: refused (errno 38 " in text  # ENOSYS: the C library falls back to clone


def test_import_errors_cannot_drive_the_terminal(root_batch):
    """h42 (a lone surrogate) and h43 (ESC, CR, OSC 52, a forged line, bidi characters) fail to
    import: the batch completes, each is one clean line on the terminal, the summary is written."""
    assert root_batch.rc == 0
    assert (root_batch.out / "summary.html").is_file() and (root_batch.out / "grades.csv").is_file()
    for bad in ("\x1b", "\r", "\x07", "\x9b", "\ud800", *INVISIBLE):
        assert bad not in root_batch.stdout + root_batch.stderr, repr(bad)
    lines = root_batch.stdout.splitlines()
    names = {"honest", "buggy", *EXPECT}
    assert all(line.split(":", 1)[0] in names for line in lines), [
        line for line in lines if line.split(":", 1)[0] not in names
    ]
    assert len(lines) == len(names)
    for name in ("h42_surrogate_import", "h43_ansi_import"):
        assert "could not be imported" in root_batch.reports[name]["problem"]
    assert "cannot import \ufffd here" in root_batch.reports["h42_surrogate_import"]["problem"]


def test_no_invisible_or_bidi_characters_in_any_output(root_batch):
    """h43 and h44 put bidi controls, zero-width characters and a BOM in an import error, their
    output and their exception messages; no report, summary, CSV, JUnit or JSON file holds one."""
    files = [root_batch.out / "summary.html", root_batch.out / "grades.csv"]
    for name in ("h43_ansi_import", "h44_bidi_output"):
        files += [root_batch.out / name / f for f in STUDENT_AND_STAFF_FILES]
    assert "\ufffdevil" in _all_text(root_batch.reports["h44_bidi_output"])  # it printed, and it was neutralised
    for path in files:
        text = path.read_text(encoding="utf-8")
        for ch in INVISIBLE:
            assert ch not in text and f"\\u{ord(ch):04x}" not in text.lower(), f"{ch!r} in {path}"


def test_forged_array_shape_is_a_protocol_error_for_that_case(root_batch):
    report = root_batch.reports["h45_forged_shape"]
    """The forged frame costs its own case and nothing else. With a process per case the frame is
    decoded and refused (a ProtocolError: test_isolation.py::test_forged_shapes_are_protocol_errors
    covers the decoder); in module isolation its os._exit ends the worker first, a crash."""
    fusion_cases = [c for c in report["cases"] if c["tag"] == "fusion" and not c["redacted"]]
    assert fusion_cases and all(c["status"] in ("error", "crashed") for c in fusion_cases)
    assert all(
        "malformed" in c["message"]
        or "could not be read" in c["message"]
        or "before reporting a result" in c["message"]
        for c in fusion_cases
    ), fusion_cases[0]["message"]
    assert not report["problem"]  # never "the grader failed"


@pytest.mark.parametrize(
    "name, says", [("h46_many_dirs", "more than 1000 entries"), ("h47_deep_dirs", "nested more than 8 deep")]
)
def test_many_and_deep_directories_refused_in_seconds(root_batch, name, says):
    report = root_batch.reports[name]
    assert report["score"] == 0 and says in report["problem"]
    assert report["duration_s"] < 5, f"{name} took {report['duration_s']:.1f} s"


# ------------------------------------------------------------------ any user: a smaller batch
def test_hostile_subset_without_root(tmp_path):
    """The attacks that need no uid of their own to be survived, graded as whoever runs the tests.
    (As root this duplicates the full batch, so it only runs for a normal user.)"""
    if IS_ROOT:
        pytest.skip("running as root: the full batch above covers these")
    names = list(NON_ROOT_SUBSET)
    batch = run_batch(tmp_path, names)
    check_batch_finished(batch, len(names) + 2)
    check_honest_unchanged(batch)
    for name in names:
        check_points(batch, name)
        check_output_capped(batch, name)
    check_no_process_left(batch)
    check_forged_op_class(batch)
    check_zip_forgery(batch)
    if LANDLOCK >= 1:  # without Landlock a normal user's sandbox reads what that user reads
        for name in names:
            check_nothing_leaked(batch, name)
        check_nothing_written_outside(batch)


def test_forged_structure_is_flagged_not_penalised(root_batch):
    """Integrity flags (grader/judging/integrity.py): the submission that walks gc and the call stack
    and patches builtins and numpy is flagged for staff, in report.json and as "needs review"
    in summary.html, and scores exactly what the honest core scores (a flag never costs or
    earns a point). The honest baseline's own code carries no flag: its only flags come from
    the hostile helper copied beside every submission."""
    report, honest = root_batch.reports["h49_forged_structure"], root_batch.reports["honest"]
    rules = {f["rule"] for f in report["flags"] if f["file"] == "cudagraph.py"}
    assert {"gc", "frames", "patch-builtins", "patch-numpy"} <= rules
    assert report["score"] == honest["score"] == honest["max_score"]
    assert [c["status"] for c in report["cases"]] == [c["status"] for c in honest["cases"]]
    assert {f["file"] for f in honest["flags"]} <= {"_hostile_kit.py"}
    summary = (root_batch.out / "summary.html").read_text()
    review = summary[summary.index('id="needs-review"') : summary.index("</table>", summary.index('id="needs-review"'))]
    assert "h49_forged_structure" in review and "needs review" in review
    student_facing = [
        (root_batch.out / "h49_forged_structure" / n).read_text() for n in ("report.html", "results.json", "junit.xml")
    ]
    assert not any("patch-builtins" in text or "needs review" in text for text in student_facing)


# ------------------------------------------------------------------ integrity round 3 (issue 25)
def _own_rules(report: dict) -> set[str]:
    """The rules flagged in a submission's own files (not the hostile helper copied beside it)."""
    return {f["rule"] for f in report["flags"] if f["file"] != "_hostile_kit.py"}


def check_forged_op_class(batch: Batch) -> None:
    report = batch.reports["h53_forged_op_class"]
    assert {"patch-class", "grader-state"} <= _own_rules(report), report["flags"]
    caught = [c for c in report["cases"] if "GraderObjectChanged" in c["message"] and not c["redacted"]]
    assert caught and all(c["status"] != "passed" for c in caught)
    assert "GraderOp.__call__" in caught[0]["message"]
    assert report["score"] < batch.reports["honest"]["score"]


def check_zip_forgery(batch: Batch) -> None:
    report = batch.reports["h54_zip_forgery"]
    assert any(f["rule"] == "compiled-code" and f["file"] == "helpers.zip" for f in report["flags"]), report["flags"]
    assert "[hostile] zip import: refused" in report["output_tail"]
    assert "zip import: WORKED" not in report["output_tail"]
    assert report["score"] == batch.reports["buggy"]["score"] < report["max_score"]


def test_forged_op_class_is_flagged_and_caught(root_batch):
    """h53 hides the fresh-buffer-on-replay bug by patching ``type(op).__call__`` and rewriting its
    call record (unguarded: 100/100, no flag). It is flagged (patch-class, grader-state), and every
    case that ran with the patched class fails with an error naming ``GraderOp.__call__``."""
    check_forged_op_class(root_batch)


def test_zip_forgery_is_flagged_and_not_importable(root_batch):
    """h54 ships a sys.modules forgery in ``helpers.zip`` and imports it (unguarded: the honest
    score, no flag). The zip is flagged, zipimport finds nothing, and it scores as the buggy build."""
    check_zip_forgery(root_batch)
