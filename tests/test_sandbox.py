"""Direct tests of the worker's confinement (``grader.run.worker.sandbox``) and its clean-up.

Each confinement test forks, confines the child with :func:`sandbox.enter` exactly as a
worker does (a scratch directory, the worker's allowlist, a leased uid when root), runs
probes inside and sends the answers back as JSON. Tests skip with a reason where the
platform lacks the layer they test (Landlock, root, seccomp).
"""

from __future__ import annotations

import errno
import json
import os
import resource
import socket
import struct
import time
from pathlib import Path

import pytest

from grader import framing, observations
from grader.run.worker import sandbox, submission
from grader.run.worker.uids import UidLease

IS_ROOT = os.geteuid() == 0
LANDLOCK = sandbox.landlock_abi()
needs_landlock = pytest.mark.skipif(LANDLOCK < 1, reason="this kernel has no Landlock")
needs_root = pytest.mark.skipif(not IS_ROOT, reason="uid drop and the private tmpfs need root")
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def lease():
    lease = UidLease() if IS_ROOT else None
    yield lease
    if lease is not None:
        lease.close()


@pytest.fixture
def layout(tmp_path, lease):
    """A scratch directory holding a submission, as the runner prepares one, plus places outside."""
    scratch = tmp_path / "slot0"
    code = scratch / "submission"
    code.mkdir(parents=True)
    (code / "cudagraph.py").write_text("x = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("visibility: hidden\n")
    uid = lease.uid(0) if lease is not None else None
    if uid is not None:
        for path in [scratch, *scratch.rglob("*")]:
            os.lchown(path, uid, uid)
    plan = sandbox.SandboxPlan(
        scratch=str(scratch),
        uid=uid,
        limits=sandbox.Limits(),
        readable=sandbox.python_readable_paths((str(code),)),
    )
    return plan, code, outside


def confined(plan: sandbox.SandboxPlan, probe) -> dict:
    """Run ``probe(applied) -> dict`` in a forked, confined child; return its answer."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        answer: dict = {}
        try:
            os.close(r)
            applied = sandbox.enter(plan, keep_fds=(w,))
            answer = {"applied": applied, **probe(applied)}
        except BaseException as exc:  # noqa: BLE001
            answer = {"crash": f"{type(exc).__name__}: {exc}"}
        finally:
            try:
                os.write(w, json.dumps(answer, default=str).encode())
            finally:
                os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 1 << 16):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    answer = json.loads(data)
    assert "crash" not in answer, answer["crash"]
    return answer


def _outcome(fn) -> str:
    try:
        fn()
    except PermissionError:
        return "denied"
    except FileNotFoundError:  # as root the worker's own mount namespace covers the name
        return "denied" if IS_ROOT else "error 2"
    except OSError as exc:
        if exc.errno == errno.EROFS and IS_ROOT:  # the worker's own mount namespace is read-only
            return "denied"
        return f"error {exc.errno}"
    return "allowed"


def _read(path):
    return lambda: Path(path).read_bytes()


def _write(path):
    return lambda: Path(path).write_text("x")


# ------------------------------------------------------------------ Landlock: what may be read and written
@needs_landlock
def test_landlock_denies_reads_outside_the_allowlist(layout):
    plan, code, outside = layout
    import reference
    import specs

    (Path(plan.scratch).parent / "slot1").mkdir()
    (Path(plan.scratch).parent / "slot1" / "cudagraph.py").write_text("another submission\n")
    targets = {
        "outside": outside / "secret.yaml",
        "specs": Path(specs.__file__).resolve().parent / "01_launch_counter.yaml",
        "reference": Path(reference.__file__).resolve().parent / "cudagraph.py",
        "repo_readme": REPO / "README.md",
        "proc_root_detour": Path(f"/proc/self/root{outside}/secret.yaml"),
        "other_slot": Path(plan.scratch).parent / "slot1" / "cudagraph.py",
    }

    def probe(applied):
        result = {name: _outcome(_read(path)) for name, path in targets.items()}
        result["outside_dir"] = _outcome(lambda: os.listdir(outside))
        result["own_code"] = _outcome(_read(code / "cudagraph.py"))
        result["stdlib"] = _outcome(lambda: __import__("xml.dom.minidom"))
        return result

    answer = confined(plan, probe)
    assert answer["applied"]["landlock_abi"] == LANDLOCK
    for name in [*targets, "outside_dir"]:
        assert answer[name] == "denied", f"{name}: {answer[name]}"
    assert answer["own_code"] == "allowed" and answer["stdlib"] == "allowed"


@needs_landlock
def test_landlock_writes_only_the_work_directory(layout):
    plan, code, outside = layout

    def probe(applied):
        return {
            "cwd": os.getcwd(),
            "work": _outcome(_write("here.txt")),
            "own_code": _outcome(_write(code / "cudagraph.py")),
            "scratch": _outcome(_write(Path(plan.scratch) / "results.json")),
            "outside": _outcome(_write(outside / "results.json")),
            "tmp": _outcome(_write(f"/tmp/graphgrade-sandbox-test-{os.getpid()}")),
        }

    answer = confined(plan, probe)
    assert answer["cwd"] == sandbox.work_dir(plan)
    assert answer["work"] == "allowed"
    assert answer["own_code"] == answer["scratch"] == answer["outside"] == answer["tmp"] == "denied"
    assert not (outside / "results.json").exists()


@pytest.mark.skipif(LANDLOCK < 4, reason="Landlock ABI 4 (TCP rules) needed")
def test_no_tcp_and_no_udp(layout):
    plan, _, _ = layout
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]

    def probe(applied):
        def tcp():
            # connect(), not socket.create_connection: that resolves the host with getaddrinfo,
            # which imports the idna codec on first use, and that import inside the sandbox
            # failed once in a parallel run of the suite (LookupError: unknown encoding: idna),
            # which is not what this test is about; an ASCII address needs no framing.
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.settimeout(1)
                s.connect(("127.0.0.1", port))

        def udp():
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.sendto(b"x", ("127.0.0.1", port))

        return {"tcp": _outcome(tcp), "udp": _outcome(udp)}

    answer = confined(plan, probe)
    listener.close()
    assert answer["tcp"] == "denied"
    assert answer["udp"] == "denied" if answer["applied"]["socket_filter"] else True


@pytest.mark.skipif(LANDLOCK < 6, reason="Landlock ABI 6 (signal scoping) needed")
def test_cannot_signal_outside_its_sandbox(layout):
    plan, _, _ = layout
    me = os.getpid()

    def probe(applied):
        return {"parent": _outcome(lambda: os.kill(me, 0)), "init": _outcome(lambda: os.kill(1, 0))}

    answer = confined(plan, probe)
    assert answer["applied"]["signal_scope"] is True
    assert answer["parent"] == "denied" and answer["init"] == "denied"


@needs_landlock
@needs_root
def test_open_by_handle_does_not_bypass_landlock(layout):
    """Run as root, the sandbox keeps CAP_DAC_READ_SEARCH (for a Python under /root), which
    also grants open_by_handle_at(2); Landlock must still refuse the file."""
    import ctypes

    plan, code, outside = layout
    libc = ctypes.CDLL(None, use_errno=True)

    # Taken outside: inside, the worker's mount namespace covers the name (name_to_handle_at then
    # fails), but a handle is only numbers, which a submission could also guess.
    handle = ctypes.create_string_buffer(8 + 128)
    struct.pack_into("I", handle, 0, 128)
    mount_id = ctypes.c_int()
    assert libc.name_to_handle_at(-100, os.fsencode(outside / "secret.yaml"), handle, ctypes.byref(mount_id), 0) == 0

    def probe(applied):
        mount_fd = os.open(code, os.O_RDONLY)
        fd = libc.open_by_handle_at(mount_fd, handle, os.O_RDONLY)
        return {"fd": fd, "errno": ctypes.get_errno(), "read_search": applied.get("read_search", False)}

    answer = confined(plan, probe)
    assert answer["fd"] < 0 and answer["errno"] == 13, answer


# ------------------------------------------------------------------ process hygiene
def test_scrubbed_environment_no_stdin_and_no_inherited_fds(layout, monkeypatch):
    plan, _, _ = layout
    monkeypatch.setenv("GRAPHGRADE_TEST_SECRET", "s3cret")
    leaked = os.open(os.devnull, os.O_RDONLY)  # a descriptor the child must not keep
    os.set_inheritable(leaked, True)

    def probe(applied):
        return {
            "env": dict(os.environ),
            "stdin": os.read(0, 10).decode(),
            "stdin_is_devnull": os.path.samestat(os.fstat(0), os.stat("/dev/null")),
            "fds": sorted(int(f) for f in os.listdir("/proc/self/fd")),
            "session_leader": os.getsid(0) == os.getpid(),
            "oom": Path("/proc/self/oom_score_adj").read_text().strip(),
        }

    try:
        answer = confined(plan, probe)
    finally:
        os.close(leaked)
    assert "GRAPHGRADE_TEST_SECRET" not in answer["env"]
    assert set(answer["env"]) <= set(sandbox.SAFE_ENV_KEYS) | {
        "HOME",
        "TMPDIR",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
    }
    assert answer["env"]["HOME"] == sandbox.work_dir(plan)
    assert answer["stdin"] == "" and answer["stdin_is_devnull"]
    assert leaked not in answer["fds"] and len(answer["fds"]) <= 5  # 0, 1, 2, the answer pipe, listdir's own
    assert answer["session_leader"] and answer["oom"] == "1000"


def test_resource_limits(layout):
    plan, _, _ = layout

    def probe(applied):
        return {
            name: resource.getrlimit(getattr(resource, name))[0]
            for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_CORE")
        }

    answer = confined(plan, probe)
    limits = sandbox.Limits()
    assert answer["RLIMIT_AS"] == limits.address_space_bytes
    assert answer["RLIMIT_FSIZE"] == limits.file_size_bytes
    assert answer["RLIMIT_NOFILE"] == limits.open_files
    assert answer["RLIMIT_CORE"] == 0
    if IS_ROOT:
        assert answer["RLIMIT_NPROC"] == limits.processes


@needs_root
def test_root_drops_to_its_own_uid_with_no_capability_but_read_search(layout):
    plan, _, _ = layout

    def probe(applied):
        status = Path("/proc/self/status").read_text()
        caps = {line.split(":")[0]: int(line.split()[1], 16) for line in status.splitlines() if line.startswith("Cap")}
        return {
            "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid()],
            "groups": os.getgroups(),
            "caps": caps,
            "nnp": "NoNewPrivs:\t1" in status,
        }

    answer = confined(plan, probe)
    assert answer["ids"] == [plan.uid] * 4 and answer["groups"] == []
    allowed = 1 << sandbox.CAP_DAC_READ_SEARCH if answer["applied"].get("read_search") else 0
    for name in ("CapEff", "CapPrm", "CapInh", "CapAmb"):
        assert answer["caps"][name] & ~allowed == 0, f"{name} = {answer['caps'][name]:x}"
    assert answer["nnp"] or not LANDLOCK


@needs_root
def test_root_gets_a_private_size_capped_tmpfs(layout):
    plan, _, _ = layout

    def probe(applied):
        stats = os.statvfs(".")
        block = b"\0" * (1 << 20)
        written = 0
        try:
            for i in range(plan.limits.scratch_bytes // len(block) + 8):
                with open(f"f{i}", "wb") as f:
                    f.write(block)
                written += len(block)
        except OSError as exc:
            refused = exc.errno
        else:
            refused = 0
        return {"size": stats.f_blocks * stats.f_frsize, "written": written, "refused": refused}

    answer = confined(plan, probe)
    if not answer["applied"].get("tmpfs"):
        pytest.skip("no CAP_SYS_ADMIN here (a restricted container): the scratch is a plain directory")
    assert answer["size"] <= plan.limits.scratch_bytes
    assert answer["written"] <= plan.limits.scratch_bytes and answer["refused"] == 28  # ENOSPC
    assert not any(Path(sandbox.work_dir(plan)).iterdir())  # it was private, and is gone


def test_a_case_cannot_reopen_the_workers_pipes(layout):
    """A case's process is the worker's child, same uid: the worker is not dumpable, so its
    /proc/<pid>/fd (where the grader's result pipe is) stays closed to the child."""
    plan, _, _ = layout

    def probe(applied):
        keep_r, keep_w = os.pipe()  # stands in for the grader's result pipe, held by the "worker"
        worker = os.getpid()
        child = os.fork()
        if child == 0:
            verdict = _outcome(lambda: os.close(os.open(f"/proc/{worker}/fd/{keep_w}", os.O_WRONLY)))
            os.write(keep_w, verdict.encode().ljust(16))
            os._exit(0)
        os.waitpid(child, 0)
        return {"reopen": os.read(keep_r, 16).decode().strip(), "not_dumpable": applied.get("not_dumpable")}

    answer = confined(plan, probe)
    assert answer["not_dumpable"] and answer["reopen"] == "denied"


# ------------------------------------------------------------------ clean-up of what a case leaves behind
@pytest.mark.parametrize("tree_only", [False, True])
def test_kill_orphans_ends_a_double_forked_daemon(tree_only):
    """Also where the no-child shortcut applies (tree_only): a daemon re-parented here is a child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - a stand-in for the worker
        try:
            sandbox.set_child_subreaper()
            child = os.fork()
            if child == 0:
                os.setsid()
                grandchild = os.fork()
                if grandchild == 0:
                    time.sleep(60)
                    os._exit(0)
                os.write(w, f"{grandchild}\n".encode())
                os._exit(0)
            os.waitpid(child, 0)
            submission.kill_orphans(signal_all=False, tree_only=tree_only)
        finally:
            os._exit(0)
    os.close(w)
    daemon = int(os.read(r, 64).split()[0])
    os.close(r)
    os.waitpid(pid, 0)
    assert (
        not Path(f"/proc/{daemon}").exists()
        or "Z" in Path(f"/proc/{daemon}/stat").read_text().rsplit(")", 1)[1].split()[0]
    )


def _frame(body: bytes) -> bytes:
    return struct.pack("<Q", len(body)) + body


def test_only_whole_observation_frames_are_relayed():
    good = observations.encode_observations("a/b", [], [])
    assert submission.relayable(b"") == b""
    assert submission.relayable(good) == good
    assert submission.relayable(good + good) == good + good  # the grader refuses two (and replaces the worker)
    for bad in (
        good[:-1],
        good + b"x",
        framing.control_frame(framing.CaseStatus(case="a/b", exitcode=0, signal=None, output_end=0)),
        good + framing.control_frame(framing.Ready()),
        b"\xff" * 100,
    ):
        relayed = submission.relayable(bad)
        body, rest = framing.split_frame(relayed)
        assert rest == b"" and not framing.is_control(body)
        with pytest.raises(observations.ProtocolError):
            observations.decode_observations(body, "a/b", 0)


@needs_root
def test_uid_leases_are_exclusive_between_runs():
    first, second = UidLease(), UidLease()
    try:
        a, b = first.uid(0), second.uid(0)
        assert a != b and first.uid(0) == a
        assert 61000 <= a < 62000 and 61000 <= b < 62000
    finally:
        first.close()
        second.close()


def test_zygote_environment_is_scrubbed(monkeypatch):
    from grader.run.runner import Zygote

    monkeypatch.setenv("GRAPHGRADE_TEST_SECRET", "s3cret")
    with Zygote() as zygote:
        pid = zygote._proc.pid
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            if b"GRAPHGRADE_ZYGOTE_CLEAN" in environ:
                break
            time.sleep(0.02)
        assert b"GRAPHGRADE_ZYGOTE_CLEAN" in environ
        assert b"s3cret" not in environ
        assert os.environ["GRAPHGRADE_TEST_SECRET"] == "s3cret"  # the grader's own is untouched
