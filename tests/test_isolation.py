"""Integrity round 2 (issue 11), tested directly: workers that cannot reach each other (IPC and
network namespaces, seccomp on keyrings and namespaces, cgroup limits, a uid's IPC objects and
keys removed), submission text made safe where it enters, every decoding failure a
ProtocolError, and a batch that no submission can stop.

The text cleaning itself is tested in ``tests/test_safetext.py``, the bounded copy and clean-up in
``tests/test_copying.py``; the hostile suite (``tests/test_hostile.py``) attacks the same layers end to end.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import struct
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_sandbox import IS_ROOT, confined, layout, lease, needs_root  # noqa: E402,F401 - fixtures

from grader import framing, observations  # noqa: E402
from grader.run.worker import cgroups, sandbox, uids  # noqa: E402

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
MACHINE = os.uname().machine
NR = sandbox.SECCOMP_ARCH.get(MACHINE, (0, {}))[1]
needs_seccomp = pytest.mark.skipif(not NR, reason=f"no seccomp filter for {MACHINE}")
IPC_CREAT, IPC_PRIVATE = 0o1000, 0


def _namespaces_possible() -> bool:
    return IS_ROOT and all(sandbox.probe_namespaces().values())


needs_namespaces = pytest.mark.skipif(
    not _namespaces_possible(),
    reason="unshare(CLONE_NEWIPC|CLONE_NEWNET) refused here (not root, or a restricted container)",
)


# ------------------------------------------------------------------ namespaces
@needs_namespaces
def test_each_worker_has_ipc_and_network_namespaces_of_its_own(layout):
    plan, _, _ = layout

    def probe(applied):
        with open("/proc/self/net/dev") as f:
            interfaces = [line.split(":")[0].strip() for line in f.readlines()[2:]]
        return {
            "ipc": os.readlink("/proc/self/ns/ipc"),
            "net": os.readlink("/proc/self/ns/net"),
            "interfaces": interfaces,
        }

    first, second = confined(plan, probe), confined(plan, probe)
    mine = {"ipc": os.readlink("/proc/self/ns/ipc"), "net": os.readlink("/proc/self/ns/net")}
    for kind in ("ipc", "net"):
        assert first[kind] != mine[kind] and second[kind] != mine[kind]  # (a dead namespace's number is reused)
    assert first["interfaces"] == ["lo"]
    assert first["applied"]["ipc_namespace"] and first["applied"]["net_namespace"]


@needs_namespaces
def test_system_v_ipc_made_in_a_worker_dies_with_it(layout):
    plan, _, _ = layout
    key = 0x47470F0F
    before = Path("/proc/sysvipc/shm").read_text()

    def probe(applied):
        shmid = libc.shmget(key, ctypes.c_size_t(1 << 20), IPC_CREAT | 0o666)
        qid = libc.msgget(key, IPC_CREAT | 0o666)
        semid = libc.semget(key, 1, IPC_CREAT | 0o666)
        return {"made": [shmid, qid, semid], "found_again": libc.shmget(key, 0, 0)}

    answer = confined(plan, probe)
    assert min(answer["made"]) >= 0 and answer["found_again"] == answer["made"][0]  # in its own namespace
    for kind in ("shm", "msg", "sem"):
        assert str(key) not in Path(f"/proc/sysvipc/{kind}").read_text()
    assert Path("/proc/sysvipc/shm").read_text() == before


@needs_namespaces
def test_dev_shm_is_empty_and_read_only(layout):
    """The mount itself, so without Landlock (which also refuses writes there)."""
    plan, _, _ = layout
    plan = sandbox.SandboxPlan(**{**plan.__dict__, "use_landlock": False})

    def probe(applied):
        try:
            Path("/dev/shm/x").write_text("x")
            written = "written"
        except OSError as exc:
            written = errno.errorcode.get(exc.errno, str(exc.errno))
        return {"written": written, "entries": os.listdir("/dev/shm")}

    answer = confined(plan, probe)
    assert answer["written"] in ("EROFS", "EACCES", "EPERM") and answer["entries"] == []


# ------------------------------------------------------------------ seccomp
def test_seccomp_program_jumps_land_inside_it():
    for machine in sandbox.SECCOMP_ARCH:
        program = sandbox.seccomp_program(machine)
        for i, (code, jt, jf, _) in enumerate(program):
            if code in (0x15, 0x35, 0x45):
                assert i + 1 + max(jt, jf) < len(program)
        assert program[-1][0] == 0x06


@needs_seccomp
def test_seccomp_refuses_keyrings_and_new_namespaces_but_not_fork_or_threads(layout):
    plan, _, _ = layout

    def call(*args):
        ctypes.set_errno(0)
        result = libc.syscall(*args)
        if result == 0 and args[0] == NR["clone"]:
            os._exit(0)
        return ctypes.get_errno() if result < 0 else "allowed"

    def probe(applied):
        c = ctypes.c_char_p
        found = {
            "add_key": call(NR["add_key"], c(b"user"), c(b"gg"), c(b"data"), ctypes.c_size_t(4), ctypes.c_int(-4)),
            "request_key": call(NR["request_key"], c(b"user"), c(b"gg"), None, ctypes.c_int(0)),
            "keyctl": call(NR["keyctl"], ctypes.c_int(0), ctypes.c_int(-4), ctypes.c_int(1)),
            "unshare_user": call(NR["unshare"], ctypes.c_ulong(sandbox.CLONE_NEWUSER)),
            "unshare_net": call(NR["unshare"], ctypes.c_ulong(sandbox.CLONE_NEWNET)),
            "clone_user": call(
                NR["clone"], ctypes.c_ulong(sandbox.CLONE_NEWUSER | signal.SIGCHLD), None, None, None, ctypes.c_ulong(0)
            ),
            "clone_parent": call(
                NR["clone"], ctypes.c_ulong(sandbox.CLONE_PARENT | signal.SIGCHLD), None, None, None, ctypes.c_ulong(0)
            ),
            "clone3": call(NR["clone3"], None, ctypes.c_size_t(0)),
            "setns": call(NR["setns"], ctypes.c_int(0), ctypes.c_int(0)),
        }
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        found["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        box = []
        thread = threading.Thread(target=box.append, args=(1,))
        thread.start()
        thread.join()
        found["thread"] = box
        return found

    answer = confined(plan, probe)
    assert answer["applied"]["socket_filter"]
    for name in (
        "add_key",
        "request_key",
        "keyctl",
        "unshare_user",
        "unshare_net",
        "clone_user",
        "clone_parent",
        "setns",
    ):
        assert answer[name] == errno.EPERM, (name, answer[name])
    assert answer["clone3"] == errno.ENOSYS
    assert answer["fork"] == 7 and answer["thread"] == [1]


# ------------------------------------------------------------------ cgroups
def _cgroups_or_skip(memory_bytes: int, processes: int) -> cgroups.RunCgroups:
    run, why = cgroups.setup(memory_bytes, processes)
    if run is None:
        pytest.skip(f"no writable cgroup here ({why}): SECURITY.md says what is lost")
    return run


@needs_root
def test_worker_cgroup_bounds_the_whole_tree(layout):
    plan, _, _ = layout
    run = _cgroups_or_skip(96 << 20, 8)
    try:
        name, procs = run.make_worker()
        plan = sandbox.SandboxPlan(**{**plan.__dict__, "cgroup_procs": procs})

        def probe(applied):
            forks = 0
            children = []
            try:
                for _ in range(20):
                    pid = os.fork()
                    if pid == 0:
                        time.sleep(5)
                        os._exit(0)
                    children.append(pid)
                    forks += 1
            except OSError:
                pass
            for pid in children:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            return {"cgroup": Path("/proc/self/cgroup").read_text(), "forks": forks}

        answer = confined(plan, probe)
        assert answer["applied"]["cgroup"]
        assert f"{cgroups.RUN_PREFIX}{os.getpid()}/{name}" in answer["cgroup"]
        assert answer["forks"] < 8  # pids.max counts the worker itself too

        # memory: a child that touches more than the limit is killed (the OOM killer, in the cgroup)
        name, procs = run.make_worker()
        plan = sandbox.SandboxPlan(**{**plan.__dict__, "cgroup_procs": procs})
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            try:
                sandbox.enter(plan, keep_fds=())
                block = bytearray(256 << 20)
                for i in range(0, len(block), 4096):
                    block[i] = 1
            finally:
                os._exit(0)
        status = os.waitpid(pid, 0)[1]
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    finally:
        run.close()
    assert not os.path.exists(next(iter(run.roots.values())))


def test_lost_layers_name_what_is_missing_as_root_only():
    from grader.run.runner import lost_layers

    everything = {
        "root": True,
        "mount_namespace": True,
        "pid_namespace": True,
        "ipc_namespace": True,
        "net_namespace": True,
        "cgroup": True,
        "landlock_abi": 6,
        "seccomp": True,
    }
    assert lost_layers(everything) == []
    assert lost_layers({**everything, "root": False, "cgroup": False}) == []
    lines = lost_layers(
        {**everything, "ipc_namespace": False, "cgroup": False, "cgroup_detail": "v1: Read-only file system"}
    )
    assert len(lines) == 2 and "IPC namespace" in lines[0] and "Read-only file system" in lines[1]
    (line,) = lost_layers({**everything, "mount_namespace": False})  # Docker's default: no CAP_SYS_ADMIN
    assert "mount namespace" in line and "hidden names" in line
    (line,) = lost_layers({**everything, "pid_namespace": False})
    assert "PID namespace" in line and "--jobs 1" in line


@needs_root
def test_the_zygote_gives_each_worker_a_pid_namespace_and_reports_how_it_ended():
    """Issue 31.3: the zygote makes a PID namespace for each worker's init; the worker (pid 2
    there) sees only its namespace, and its own exit status comes back through init, whether it
    ended itself or was ended."""
    from grader.run.worker import pidns

    own = pidns.own_namespace()
    if own is None:
        pytest.skip("the kernel refuses a new PID namespace here")
    r, w = os.pipe()

    def worker(in_namespace: bool) -> None:
        seen = sorted(int(n) for n in os.listdir("/proc") if n.isdigit())  # the machine's /proc still
        os.write(w, f"{in_namespace} {os.getpid()} {os.getppid()} {os.sched_getaffinity(1) is not None}".encode())
        os.close(w)
        os._exit(7 if seen else 8)

    pid, status_r = pidns.fork_worker(own, worker, (r, w))
    os.close(w)
    with os.fdopen(r) as f:
        assert f.read() == "True 2 1 True"
    os.waitpid(pid, 0)  # init ends once its worker has
    assert pidns.worker_status(status_r) == 7
    r, w = os.pipe()

    def sleeper(in_namespace: bool) -> None:
        os.close(w)
        time.sleep(60)
        os._exit(0)

    pid, status_r = pidns.fork_worker(own, sleeper, (r, w))
    os.close(w)
    os.kill(pid, signal.SIGTERM)  # what the zygote sends: init ends its worker, then itself
    os.waitpid(pid, 0)
    assert pidns.worker_status(status_r) == -signal.SIGKILL
    assert os.read(r, 1) == b""  # the worker is gone with it
    os.close(r)
    assert os.readlink("/proc/self/ns/pid") == os.readlink(f"/proc/{os.getppid()}/ns/pid")  # back in its own
    pid, status_r = pidns.fork_worker(None, lambda in_namespace: os._exit(5 if in_namespace else 6), ())
    assert status_r is None and os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 6  # no namespace: as before


@needs_root
def test_the_mount_namespace_probe_is_false_without_the_capability():
    """What lost_layers reports a run without CAP_SYS_ADMIN lacks: a process that dropped root
    cannot have a mount namespace of its own, and the probe says so."""
    from grader.run.worker.kernel import in_child

    def dropped() -> bytes:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
        return b"1" if sandbox.probe_mount_namespace() else b"0"

    assert in_child(dropped) == b"0"


# ------------------------------------------------------------------ a sandbox uid's leftovers
@needs_root
def test_uid_purge_removes_its_ipc_objects_and_keys(lease):
    uid = lease.uid(7)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the sandbox uid leaves things behind
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            made = [
                libc.shmget(IPC_PRIVATE, ctypes.c_size_t(4096), 0o600),
                libc.msgget(IPC_PRIVATE, 0o600),
                libc.semget(IPC_PRIVATE, 1, 0o600),
            ]
            key = libc.syscall(
                NR.get("add_key", -1),
                ctypes.c_char_p(b"user"),
                ctypes.c_char_p(b"gg-purge"),
                ctypes.c_char_p(b"x"),
                ctypes.c_size_t(1),
                ctypes.c_int(-4),
            )
            os.write(w, json.dumps({"made": made, "key": key}).encode())
        finally:
            os._exit(0)
    os.close(w)
    made = json.loads(os.read(r, 4096))
    os.close(r)
    os.waitpid(pid, 0)
    assert min(made["made"]) >= 0
    assert uids.remove_ipc_objects(uid) >= 3
    for kind in ("shm", "msg", "sem"):
        rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        assert not any(str(uid) in row.split() for row in rows), kind
    if NR and made["key"] > 0:  # keys: the zygote's clean-up empties the uid's keyrings
        from grader.run.worker import zygote

        zygote._kill_uid(uid)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                found = libc.syscall(
                    NR["request_key"], ctypes.c_char_p(b"user"), ctypes.c_char_p(b"gg-purge"), None, ctypes.c_int(0)
                )
                os.write(w, str(found).encode())
            finally:
                os._exit(0)
        os.close(w)
        found = int(os.read(r, 64))
        os.close(r)
        os.waitpid(pid, 0)
        assert found < 0, "the key outlived the purge"


# ------------------------------------------------------------------ text from a worker made safe
def test_text_from_a_worker_is_made_safe_when_decoded():
    ctl = framing.control_frame(
        framing.ImportFailed(type="RuntimeError", message="a\x1b[31m\u202eb\ud800", where="cudagraph.py:1")
    )
    body, _ = framing.split_frame(ctl)
    decoded = framing.decode_control(body)
    assert decoded.message == "a\ufffdb\ufffd"


# ------------------------------------------------------------------ every decoding failure is a ProtocolError
def _frame(value, blobs=(b"",), steps=1, case="s/c"):
    records = [{"index": i, "outcome": "returned", "value": value if i == 0 else 0} for i in range(steps)]
    header = json.dumps({"protocol": 1, "case": case, "steps": records}).encode()
    body = framing.MAGIC + struct.pack("<II", len(header), len(blobs)) + header
    for blob in blobs:
        body += struct.pack("<Q", len(blob)) + blob
    return body


@pytest.mark.parametrize(
    "shape",
    [[0, 2**31 - 1, 2**31 - 1, 2**31 - 1], [0, observations.MAX_ELEMENTS + 1], [2**31 - 1, 0], [1, 2, 0, 2**20, 2**20]],
)
def test_forged_shapes_are_protocol_errors(shape):
    body = _frame({"ndarray": {"dtype": "float32", "shape": shape, "blob": 0}})
    with pytest.raises(observations.ProtocolError):
        observations.decode_observations(body, "s/c", 1)


def test_empty_arrays_within_bounds_still_decode():
    body = _frame({"ndarray": {"dtype": "float32", "shape": [0, 4], "blob": 0}})
    assert observations.decode_observations(body, "s/c", 1).steps[0].value.shape == (0, 4)


def test_any_failure_inside_the_decoder_is_a_protocol_error(monkeypatch):
    def broken(self, obj, where):
        raise KeyError("a decoder bug")

    monkeypatch.setattr(observations._Decoder, "step", broken)
    with pytest.raises(observations.ProtocolError, match="KeyError"):
        observations.decode_observations(_frame(1, blobs=()), "s/c", 1)


# ------------------------------------------------------------------ one submission never stops a batch
@pytest.mark.slow
def test_a_failure_writing_or_printing_one_submission_costs_only_that_one(tmp_path, monkeypatch):
    import specs as specs_package
    from grader.commands import grade
    from grader.run.runner import RunSettings, Zygote
    from grader.suite.loader import load_suite

    names = ["alice", "bob", "carol"]
    subs = []
    for name in names:
        sub = tmp_path / "subs" / name
        sub.mkdir(parents=True)
        (sub / "cudagraph.py").write_text("raise ImportError('nothing here')\n")
        subs.append(sub)
    real_write = grade._write_outputs

    def write(report, out_dir, *rest, **options):
        if report.submission == "bob" and "grader failed" not in report.problem:
            raise RuntimeError("disk on fire")
        real_write(report, out_dir, *rest, **options)

    printed = []

    def on_done(graded, done, total):
        if graded.name == "carol":
            raise UnicodeEncodeError("ascii", "\u202e", 0, 1, "a terminal that cannot show it")
        printed.append(graded.name)

    monkeypatch.setattr(grade, "_write_outputs", write)
    with Zygote() as zygote:
        loaded = load_suite(Path(specs_package.__file__).resolve().parent)
        specs = loaded.suite.only_visible().specs[:2]
        graded = grade.grade_submissions(
            zygote, loaded, specs, subs, tmp_path / "out", RunSettings(), jobs=2, on_done=on_done
        )
    by_name = {g.name: g for g in graded}
    assert sorted(by_name) == names
    assert not by_name["alice"].grader_failed and sorted(printed) == [
        "alice",
        "bob",
    ]  # graded two at a time: either may finish first
    assert by_name["bob"].grader_failed and "writing its reports" in by_name["bob"].report.problem
    assert by_name["carol"].grader_failed and "printing its result" in by_name["carol"].report.problem
    for name in names:
        assert (tmp_path / "out" / name / "report.json").is_file()
    assert "printing its result" in (tmp_path / "out" / "carol" / "report.json").read_text()
    assert (tmp_path / "out" / "summary.html").is_file() and (tmp_path / "out" / "grades.csv").is_file()


def test_the_exit_status_of_a_grader_problem_is_documented():
    from grader.commands.cli import build_parser

    grade_help = build_parser()._subparsers._group_actions[0].choices["grade"].format_help()
    for text in (
        "0 done",
        "grade --fail-under not met",
        "2 bad arguments or bad specs",
        "3 a grader problem",
        "every other submission was graded",
    ):
        assert text in " ".join(grade_help.split()), text
