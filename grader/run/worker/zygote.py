"""The zygote: a clean, warm process that forks one worker per submission.

Started by the grader with a fresh interpreter (``python -m grader.run.worker.zygote FD``)
*before* any spec is loaded, so no hidden case, expected value or grader state
ever exists in a worker's memory. It imports numpy and the worker modules once,
then serves requests on a Unix socket:

* ``spawn``: three file descriptors arrive with the request (the worker's ends of
  the command pipe, the result pipe and the output file); fork a worker, which
  confines itself and imports the submission; answer its pid;
* ``kill``: end a worker's whole process group and, when it ran under a uid of
  its own, every process of that uid; also end any orphan that re-parented here.

The zygote runs no submission code. It is a child subreaper, so processes a
worker leaves behind land here, where they are killed.

Its environment is scrubbed by re-executing itself before anything else: a fork
shares its parent's memory, and the environment the interpreter was started
with stays readable there (``/proc/self/environ``) whatever ``os.environ`` says
later, so a worker must never descend from a process that held the grader's
environment (tokens, paths, anything).
"""

from __future__ import annotations

import os
import sys

from grader.run.worker.sandbox import SAFE_ENV_KEYS, SINGLE_THREADED

# What the zygote (and so every worker) may keep of the grader's environment.
KEPT_ENV = SAFE_ENV_KEYS + ("PYTHONPATH",)
SCRUBBED_MARK = "GRAPHGRADE_ZYGOTE_CLEAN"


def _clean_environment() -> dict[str, str]:
    env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
    env.update({SCRUBBED_MARK: "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", **SINGLE_THREADED})
    env["PYTHONSAFEPATH"] = "1"  # no folder of the caller's on its path (grader.trusted_path)
    return env


if __name__ == "__main__" and os.environ.get(SCRUBBED_MARK) != "1":
    os.execve(sys.executable, [sys.executable, "-m", "grader.run.worker.zygote", *sys.argv[1:]], _clean_environment())

# After the re-exec above, on purpose (the per-file E402/F401 exemption in pyproject.toml). The
# standard-library and numpy modules that are not used here are imported once, in the zygote, so
# that every forked worker shares them instead of importing them again.
import abc
import array
import collections
import copy
import dataclasses
import enum
import functools
import itertools
import json
import math
import signal
import socket
import time
import typing

import numpy
import numpy.linalg
import numpy.random

from grader.run.worker import cgroups, inprocess, pidns, sandbox, uids
from grader.run.worker.submission import serve

MAX_REQUEST = 64 * 1024


KILL_SECONDS = 2.0


# Live workers. Their pids are never reaped but by _kill_worker, after they were signalled: an
# unreaped pid (and the process group it leads) cannot be reused, so signalling it as root can
# never hit an unrelated process that happened to get the same number.
WORKERS: set[int] = set()
# The run's cgroups (grader.run.worker.cgroups), or None, and why; each live worker's cgroup name.
CGROUPS: list = [None, "not set up"]
WORKER_CGROUPS: dict[int, str] = {}
# Sandbox uids with nothing left of them (no process, IPC object or key) since their last worker
# was ended here: the next worker under one needs no clean-up first. Only this zygote starts
# processes under the run's uids (grader.run.worker.uids leases them to this run alone).
CLEAN_UIDS: set[int] = set()
# The zygote's own PID namespace (grader.run.worker.pidns), or None where workers share it; for
# each worker in a namespace of its own, the descriptor its init reports its exit status on.
PID_NAMESPACE: list[int | None] = [None]
STATUS_PIPES: dict[int, int] = {}


def _reap() -> None:
    """Reap every finished child but the workers (see WORKERS)."""
    for pid in sandbox.children():
        if pid not in WORKERS:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _wait_dead(pid: int, until: float) -> int | None:
    """Reap ``pid`` (already sent SIGKILL), so that its children have re-parented here; returns
    its exit code (negative: the signal that ended it), None if unknown."""
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > until:
            return None
        time.sleep(0.001)


def _uid_running(uid: int) -> bool:
    """Whether a live (not zombie) process of ``uid`` exists anywhere."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as f:
                status = f.read(2048)
        except OSError:
            continue
        state = uid_line = None
        for line in status.split(b"\n"):
            if line.startswith(b"State:"):
                state = line.split()[1:2]
            elif line.startswith(b"Uid:"):
                uid_line = line.split()[1:2]
                break
        if uid_line == [str(uid).encode()] and state not in ([b"Z"], [b"X"]):
            return True
    return False


def _kill_uid(uid: int, contained: bool = False) -> None:
    """Kill every process running as ``uid`` (a sandbox uid this grading run holds alone),
    until none is left alive: one that was forking when killed may leave a child behind.
    Then remove what it left in the kernel: its System V IPC objects and its keys.

    ``contained``: the uid's last worker ran in a cgroup that has since been seen empty
    (:meth:`grader.run.worker.cgroups.RunCgroups.empty_worker`), so every process the uid had is
    known dead without searching all of /proc for it."""
    until = time.monotonic() + KILL_SECONDS
    CLEAN_UIDS.discard(uid)
    clean = False
    while not clean:
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                try:
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:  # nothing else runs as this uid
                    pass
                uids.clear_own_keys()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        _reap()  # those that re-parented here
        clean = contained or not _uid_running(uid)
        if time.monotonic() >= until:
            break
    uids.remove_ipc_objects(uid)
    if clean:
        CLEAN_UIDS.add(uid)


def _kill_strays(workers: set[int] = WORKERS) -> None:
    """Kill and reap every child that is not a live worker (orphans that re-parented here),
    until there is none: killing one lets its own children re-parent here in turn."""
    until = time.monotonic() + KILL_SECONDS
    while time.monotonic() < until:
        strays = [pid for pid in sandbox.children() if pid not in workers]
        if not strays:
            return
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in strays:
            _wait_dead(pid, until)


def _kill_worker(pid: int, uid: int | None, workers: set[int] = WORKERS) -> int | None:
    """End a worker and all it left; returns how it ended (see _wait_dead): for a worker that
    had already died (a case crashed it, in module isolation), why."""
    cgroup = WORKER_CGROUPS.pop(pid, None)
    ended = None
    status_r = STATUS_PIPES.pop(pid, None)
    if pid in workers and status_r is not None:  # the namespace's init: it ends the worker, then itself
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        if _wait_dead(pid, time.monotonic() + KILL_SECONDS) is None:
            os.kill(pid, signal.SIGKILL)  # the kernel then kills all the namespace holds
            _wait_dead(pid, time.monotonic() + KILL_SECONDS)
        ended = pidns.worker_status(status_r)
        workers.discard(pid)
    elif pid in workers:  # else not ours: its number may belong to someone else, never signal it
        for target in (-pid, pid):
            try:
                os.kill(target, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        ended = _wait_dead(pid, time.monotonic() + KILL_SECONDS)
        workers.discard(pid)
    contained = False
    if cgroup is not None and CGROUPS[0] is not None:
        contained = CGROUPS[0].empty_worker(cgroup)  # kills whatever still runs in it
    if uid is not None and os.geteuid() == 0:
        _kill_uid(uid, contained)
    _kill_strays(workers)
    _reap()
    if cgroup is not None and CGROUPS[0] is not None:
        CGROUPS[0].remove_worker(cgroup)  # kills whatever still runs in it, then removes it
    return ended


def _plan_from(request: dict, cgroup_procs: tuple[str, ...] = ()) -> sandbox.SandboxPlan:
    limits = sandbox.Limits(**request["limits"])
    readable = sandbox.python_readable_paths(tuple(request.get("import_paths", ())) + (request["submission_root"],))
    return sandbox.SandboxPlan(
        scratch=request["scratch"],
        uid=request.get("uid"),
        limits=limits,
        readable=readable,
        use_landlock=request.get("landlock", True),
        import_paths=tuple(request.get("import_paths", ())),
        cgroup_procs=cgroup_procs,
    )


def layers() -> dict:
    """Which isolation layers a worker gets on this machine, and why not where it does not
    (the grader prints what is lost; SECURITY.md says what that costs)."""
    root = os.geteuid() == 0
    found: dict = {
        "root": root,
        "landlock_abi": sandbox.landlock_abi(),
        "seccomp": sandbox.seccomp_program(os.uname().machine) is not None,
    }
    found.update(sandbox.probe_namespaces() if root else {"ipc_namespace": False, "net_namespace": False})
    found["mount_namespace"] = root and sandbox.probe_mount_namespace()
    found["pid_namespace"] = PID_NAMESPACE[0] is not None and found["mount_namespace"]
    found["cgroup"] = CGROUPS[0] is not None
    found["cgroup_detail"] = CGROUPS[1]
    return found


def warm_up() -> None:
    """Exercise the grader's own code paths once, so that forked case processes find numpy's and the
    interpreter's lazy initialisation already done (it otherwise reruns, and is paid for, in every
    case: about 10 ms each on a small VM). Runs no submission code."""
    import gc
    import types

    from grader import framing, observations
    from grader.lab import active as active_lab
    from grader.lab import op_vocabulary, preload_pack
    from grader.observe.interpreter import run_case
    from grader.spec_model import ArrayValue, OpSpec, OpsValue, Step

    preload_pack(active_lab())  # the lab's op vocabulary and provided objects, before any submission
    ops = op_vocabulary()
    kinds = ops.kinds if ops is not None else {}
    chain = tuple(OpSpec(name, 1 if kind.takes else None) for name, kind in kinds.items())
    dummy = types.ModuleType("warm_up")
    # the lab's first function entry point, played by a stand-in that runs the ops on the array
    # (a lab without one: the step is not reached, and the codec's paths are warmed alike)
    function = next(iter(active_lab().contract_functions), "warm_up")
    setattr(dummy, function, lambda *args: [op(args[-1]) for op in args[0]][-1] if len(args) > 1 else args[-1])
    for dtype in ("float32", "float64"):
        for shape in ((3,), (2, 3), (2, 2, 3)):
            array = ArrayValue(dtype, shape, seed=0)
            args = (OpsValue(chain), array) if ops is not None else (array,)  # a lab without ops: the array alone
            steps = (Step(0, "call", function, name="out", args=args),)
            frame = run_case(dummy, "warm/up", steps)
            body, _ = framing.split_frame(frame)
            observations.decode_observations(body, "warm/up", 1)
    framing.read_case_message(framing.case_message("warm/up", steps))
    gc.collect()
    gc.freeze()  # what exists now is shared by every fork; the collector leaves it alone


def _run_worker(
    sock: socket.socket, plan: sandbox.SandboxPlan, request: dict, fds: tuple[int, int, int], in_namespace: bool
) -> None:
    """The forked worker (never returns): in a PID namespace of its own when ``in_namespace``."""
    sock.close()
    plan = dataclasses.replace(plan, pid_namespace=in_namespace)
    serve(plan, request["submission_root"], *fds, request.get("isolation", "process"), request.get("lab"))


def main(sock_fd: int) -> None:
    warm_up()
    sandbox.set_child_subreaper()
    sandbox.die_with_parent()
    limits = sandbox.Limits()
    CGROUPS[:] = cgroups.setup(limits.memory_bytes, limits.processes)
    PID_NAMESPACE[0] = pidns.own_namespace() if sandbox.probe_mount_namespace() else None
    sock = socket.socket(fileno=sock_fd)
    workers = WORKERS
    while True:
        try:
            data, ancdata, _, _ = sock.recvmsg(MAX_REQUEST, socket.CMSG_LEN(8 * array.array("i").itemsize))
        except (ConnectionResetError, OSError):
            break
        if not data:
            break
        fds: list[int] = []
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                received = array.array("i")
                received.frombytes(payload[: len(payload) - (len(payload) % received.itemsize)])
                fds.extend(received)
        request = json.loads(data)
        _reap()
        if request["op"] == "spawn":
            cmd_fd, res_fd, out_fd = fds
            run_cgroups = CGROUPS[0]
            cgroup_name, cgroup_procs = None, ()
            if run_cgroups is not None and request.get("uid") is not None:
                limits = sandbox.Limits(**request["limits"])
                run_cgroups.memory_bytes, run_cgroups.processes = limits.memory_bytes, limits.processes
                try:
                    cgroup_name, cgroup_procs = run_cgroups.make_worker()
                except OSError as exc:  # the host took the cgroup away: go on without, and say so
                    CGROUPS[:] = [None, f"lost during the run ({exc.strerror or exc})"]
            plan = _plan_from(request, cgroup_procs)
            if plan.uid is not None and os.geteuid() == 0 and plan.uid not in CLEAN_UIDS:
                _kill_uid(plan.uid)  # nothing may run as this uid (or be left of it) but the new worker's sandbox
            CLEAN_UIDS.discard(plan.uid)  # in use from now on
            own = PID_NAMESPACE[0] if plan.uid is not None else None
            run_worker = functools.partial(_run_worker, sock, plan, request, (cmd_fd, res_fd, out_fd))
            pid, status_r = pidns.fork_worker(own, run_worker, (sock.fileno(), *fds, *STATUS_PIPES.values()))
            for fd in fds:
                os.close(fd)
            if status_r is not None:
                STATUS_PIPES[pid] = status_r
            workers.add(pid)
            if cgroup_name is not None:
                WORKER_CGROUPS[pid] = cgroup_name
            sock.sendall(json.dumps({"pid": pid}).encode())
        elif request["op"] == "layers":
            sock.sendall(json.dumps(layers()).encode())
        elif request["op"] == "kill":
            ended = _kill_worker(int(request["pid"]), request.get("uid"), workers)
            sock.sendall(json.dumps({"ok": True, "ended": ended}).encode())
        else:
            for fd in fds:
                os.close(fd)
            break
    for pid in list(workers):
        for target in (-pid, pid):
            try:
                os.kill(target, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    for pid in list(workers):
        _wait_dead(pid, time.monotonic() + KILL_SECONDS)
    _kill_strays(set())
    _reap()
    if CGROUPS[0] is not None:
        CGROUPS[0].close()
    os._exit(0)


if __name__ == "__main__":
    main(int(sys.argv[1]))
