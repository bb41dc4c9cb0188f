"""Confine a worker process before it runs a line of submission code.

Layers, each applied where the platform allows it (see SECURITY.md):

1. its own session and process group, no stdin, a scrubbed environment, no file
   descriptor but its own pipes and log, first in line for the OOM killer;
2. resource limits: address space, CPU seconds, file size, open files, processes;
3. as root: a private mount namespace (:mod:`grader.run.worker.mounts`) where every mount is
   read-only and noatime, every name it has no use for is covered (so even ``stat`` finds
   nothing of the specs, the reference or other submissions), and the working directory is
   a small tmpfs (so a submission cannot fill the grader's disk); then a drop to an
   unprivileged uid/gid of its own (no supplementary groups);
4. Linux Landlock (unprivileged, kernel >= 5.13): the process may read only the
   Python standard library, numpy, the worker's own modules, the system's shared
   libraries and its own submission, write only its working directory, open no
   TCP connection (ABI 4), and signal or reach through an abstract Unix socket no
   process outside its own sandbox (ABI 6). Specs, reports, the reference
   solution and other submissions are simply not there for it;
5. a seccomp filter (:mod:`grader.run.worker.seccomp`): no socket but a Unix one, no io_uring,
   no kernel keyring, no new namespace, no process outside its own tree, and no state kept on
   an inode another worker can see (file locks of every kind, leases, inotify, fanotify,
   dnotify) nor a probe of a shared file's page cache;
6. as root, namespaces of its own: IPC (System V shared memory, message queues
   and semaphores, and POSIX message queues, die with the worker and are never
   shared with another) and network (no interface but a loopback that is down),
   and a read-only, empty ``/dev/shm``; a PID namespace of its own, made by the zygote
   (:mod:`grader.run.worker.pidns`), where no other worker's process has a number, with a
   ``/proc`` of it; and, where the host gives a writable
   cgroup, a memory and a process limit for the worker's whole tree
   (:mod:`grader.run.worker.cgroups`).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import sysconfig
from dataclasses import dataclass

from grader.run.worker import mounts
from grader.run.worker.kernel import (  # noqa: F401 - CLONE_*: re-exported for the tests
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWUSER,
    CLONE_PARENT,
    PR_CAPBSET_DROP,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    PR_SET_KEEPCAPS,
    PR_SET_PDEATHSIG,
)
from grader.run.worker.kernel import libc as _libc
from grader.run.worker.kernel import prctl as _prctl
from grader.run.worker.landlock import apply_landlock, landlock_abi
from grader.run.worker.mounts import probe_mount_namespace, probe_namespaces  # noqa: F401 - re-exported
from grader.run.worker.seccomp import SECCOMP_ARCH, apply_socket_filter, seccomp_program  # noqa: F401 - re-exported

WORK_DIR = "work"  # beneath the scratch directory: the only place a worker may write


@dataclass(frozen=True)
class Limits:
    """Resource limits of one worker (each case inherits them)."""

    address_space_bytes: int = 4 << 30
    cpu_seconds: int = 120
    file_size_bytes: int = 8 << 20
    open_files: int = 64
    processes: int = 64
    scratch_bytes: int = 64 << 20  # size of the tmpfs working directory (root only)
    memory_bytes: int = 1 << 30  # the whole worker tree's memory, where a cgroup is writable (root only)


@dataclass(frozen=True)
class SandboxPlan:
    scratch: str
    uid: int | None  # None: keep the current user (not root)
    limits: Limits
    readable: tuple[str, ...]  # paths the worker may read (and execute) beneath
    use_landlock: bool = True
    import_paths: tuple[str, ...] = ()  # trusted extra import roots (the audit's mutants need the reference)
    cgroup_procs: tuple[str, ...] = ()  # the worker's cgroup.procs files to join (grader.run.worker.cgroups)
    pid_namespace: bool = False  # forked into a PID namespace of its own (grader.run.worker.pidns)


def children() -> list[int]:
    """Pids of this process's children (with a subreaper: also the orphans re-parented to it).
    Read with plain system calls, not a text file object: a worker asks after every case."""
    me = os.getpid()
    try:
        fd = os.open(f"/proc/{me}/task/{me}/children", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return [int(p) for p in b"".join(chunks).split()]
    except (OSError, ValueError):
        return []
    finally:
        os.close(fd)


def set_child_subreaper() -> None:
    """Orphaned descendants re-parent to this process, so it can find and end them."""
    try:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
    except OSError:
        pass


def die_with_parent() -> None:
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


def _stdlib_entries() -> set[str]:
    """The standard library's files and folders, without the site-packages folder beneath it
    (which holds the grader's own packages, the reference solution among them)."""
    entries: set[str] = set()
    for root in {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")}:
        try:
            names = os.listdir(root)
        except OSError:
            continue
        entries.update(os.path.join(root, n) for n in names if n not in ("site-packages", "dist-packages"))
    return entries


def _is_package_dir(path: str) -> bool:
    parts = path.split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def _system_library_paths() -> set[str]:
    """The system's shared-library folders, not ``/usr/lib`` as a whole: that also holds
    ``python3/dist-packages``, where a system-wide install would put the specs and the reference.
    Plus every shared object this process has mapped outside a package folder (libpython, libc)."""
    paths = {"/usr/lib64", "/lib64", "/usr/lib/locale", "/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo"}
    for base in ("/usr/lib", "/lib"):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        paths.update(os.path.join(base, n) for n in names if "-linux-" in n)  # multiarch: x86_64-linux-gnu
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) == 6 and fields[5].startswith("/"):
                    mapped = fields[5].strip()
                    if not _is_package_dir(mapped) and not mapped.endswith(" (deleted)"):
                        paths.add(mapped)  # a file rule: that file only
    except OSError:
        pass
    return paths


_INTERPRETER_PATHS: list[frozenset[str]] = []  # python_readable_paths() without extras, once per process


def python_readable_paths(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What an interpreter that already imported numpy needs to read to import more stdlib.
    The interpreter's own part is found once per process (the zygote asks before every worker;
    what it has mapped and where its library lives do not change while it runs)."""
    if not _INTERPRETER_PATHS:
        import numpy

        paths = (
            _stdlib_entries()
            | _system_library_paths()
            | {
                os.path.dirname(numpy.__file__),
                os.path.dirname(
                    os.path.dirname(os.path.dirname(__file__))
                ),  # the grader package (worker modules only matter)
                "/dev/null",
                "/dev/urandom",
                "/proc/self",
                "/sys/devices/system/cpu",
            }
        )
        numpy_libs = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
        paths.add(numpy_libs)
        _INTERPRETER_PATHS.append(frozenset(p for p in paths if p and os.path.exists(p)))
        mounts.remember_real_paths(_INTERPRETER_PATHS[0])
    return tuple(sorted(_INTERPRETER_PATHS[0].union(p for p in extra if p and os.path.exists(p))))


SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "TZ", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
# One thread per library: cases run in parallel processes, and forking a threaded BLAS is slow.
SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def scrubbed_environment(scratch: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in SAFE_ENV_KEYS if k in os.environ}
    env.update(
        HOME=scratch,
        TMPDIR=scratch,
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONHASHSEED="0",
        **SINGLE_THREADED,
    )
    return env


CAP_DAC_READ_SEARCH = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _capset(number: int, keep: int) -> bool:
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)(_CapData(keep, keep, 0), _CapData(0, 0, 0))
    return _libc.syscall(number, ctypes.byref(header), ctypes.byref(data)) == 0


def _drop_to_uid_keeping_read_search(uid: int) -> bool:
    """setuid(uid) but keep CAP_DAC_READ_SEARCH, so the interpreter's files stay readable even
    where they live under a private home (a Python under /root). Only ever used together with
    Landlock, which then decides what may be read. Always ends as ``uid``; returns whether the
    capability was kept (not where the platform or a container's bounding set refuses it, and
    then no capability at all is left)."""
    number = _SYS_CAPSET.get(os.uname().machine)
    if number is None:
        return False
    _prctl(PR_SET_KEEPCAPS, 1)
    for cap in range(64):  # nothing can be regained later
        if cap != CAP_DAC_READ_SEARCH:
            _libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    kept = _capset(number, 1 << CAP_DAC_READ_SEARCH)
    if not kept and not _capset(number, 0):  # KEEPCAPS kept every permitted capability: drop them
        raise OSError("could not drop the capabilities kept across setuid")
    _prctl(PR_SET_KEEPCAPS, 0)
    return kept


def _capabilities() -> dict[str, int]:
    with open("/proc/self/status") as f:
        return {line.split(":")[0]: int(line.split()[1], 16) for line in f if line.startswith("Cap")}


def _set_limit(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass


def _close_fds(keep: tuple[int, ...]) -> None:
    """Close every inherited descriptor above stderr except ``keep`` (whatever the fd limit)."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 4096))
    for fd in fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _oom_first() -> None:
    """If memory runs out, the kernel kills a worker, never the grader."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass


def work_dir(plan: SandboxPlan) -> str:
    return os.path.join(plan.scratch, WORK_DIR)


def enter(plan: SandboxPlan, keep_fds: tuple[int, ...]) -> dict[str, object]:
    """Confine the current (freshly forked) process. Returns what was applied, for the report.

    Raises where a layer that must hold could not be applied; the caller then ends the
    process without running any submission code."""
    applied: dict[str, object] = {}
    os.setsid()
    die_with_parent()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    _close_fds(keep_fds)
    _oom_first()
    work = work_dir(plan)
    as_root = plan.uid is not None and os.geteuid() == 0
    os.makedirs(work, mode=0o700, exist_ok=True)
    if as_root:
        if plan.cgroup_procs:  # first: every process this worker starts is counted there
            from grader.run.worker import cgroups

            cgroups.join(plan.cgroup_procs)
            applied["cgroup"] = True
        # the view: read-only and noatime, names it has no use for hidden, a tmpfs to write in
        applied.update(mounts.private_view(work, plan.uid, plan.limits.scratch_bytes, plan.readable))
        applied.update(mounts.private_namespaces(bool(applied["tmpfs"]), plan.pid_namespace))
        if plan.pid_namespace and not applied.get("pid_namespace"):
            raise OSError("in a PID namespace of its own without a /proc of it")
        os.chown(work, plan.uid, plan.uid)
    os.chdir(work)
    os.environ.clear()
    os.environ.update(scrubbed_environment(work))
    os.umask(0o077)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an output flood fails its write, not the worker
    landlock = plan.use_landlock and landlock_abi() >= 1
    if as_root:
        if landlock and _drop_to_uid_keeping_read_search(plan.uid):
            applied["read_search"] = True
        elif os.getuid() == 0:
            os.setgroups([])
            os.setgid(plan.uid)
            os.setuid(plan.uid)
        if os.getresuid() != (plan.uid,) * 3 or os.getresgid() != (plan.uid,) * 3 or os.getgroups():
            raise OSError("could not drop privileges")
        allowed = 1 << CAP_DAC_READ_SEARCH if applied.get("read_search") else 0
        caps = _capabilities()
        if any(caps.get(name, 0) & ~allowed for name in ("CapEff", "CapPrm", "CapInh", "CapAmb")):
            raise OSError(f"capabilities left after the drop: {caps}")
        applied["uid"] = plan.uid
    _set_limit(resource.RLIMIT_AS, plan.limits.address_space_bytes)
    _set_limit(resource.RLIMIT_CPU, plan.limits.cpu_seconds)
    _set_limit(resource.RLIMIT_FSIZE, plan.limits.file_size_bytes)
    _set_limit(resource.RLIMIT_NOFILE, plan.limits.open_files)
    if "uid" in applied:  # RLIMIT_NPROC counts every process of the uid: only meaningful for a uid of its own
        _set_limit(resource.RLIMIT_NPROC, plan.limits.processes)
    _set_limit(resource.RLIMIT_CORE, 0)
    applied["limits"] = True
    if landlock:
        abi = apply_landlock(plan.readable, (work, "/dev/null"))
        applied["landlock_abi"] = abi
        applied["signal_scope"] = abi >= 6  # kill(-1) now reaches this sandbox's own processes only
        if not abi and applied.get("read_search"):
            raise OSError("Landlock failed after keeping CAP_DAC_READ_SEARCH; refusing to run unconfined")
    applied["socket_filter"] = apply_socket_filter()
    die_with_parent()  # again: changing uid cleared it; if the zygote dies, so does this worker
    # Not dumpable: no process of the same uid (a case's own, forked from here) may open this
    # one's /proc/<pid>/fd/* (the grader's pipes), read its memory or ptrace it. A uid drop does
    # this already; a normal user's worker needs it said.
    _prctl(PR_SET_DUMPABLE, 0)
    applied["not_dumpable"] = True
    sys.dont_write_bytecode = True
    return applied
