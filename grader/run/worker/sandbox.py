"""Confine a worker process before it runs a line of submission code.

Layers, each applied where the platform allows it (see SECURITY.md):

1. its own session and process group, no stdin, a scrubbed environment, no file
   descriptor but its own pipes and log, first in line for the OOM killer;
2. resource limits: address space, CPU seconds, file size, open files, processes;
3. as root: a private mount namespace whose working directory is a small tmpfs
   (so a submission cannot fill the grader's disk), then a drop to an
   unprivileged uid/gid of its own (no supplementary groups);
4. Linux Landlock (unprivileged, kernel >= 5.13): the process may read only the
   Python standard library, numpy, the worker's own modules, the system's shared
   libraries and its own submission, write only its working directory, open no
   TCP connection (ABI 4), and signal or reach through an abstract Unix socket no
   process outside its own sandbox (ABI 6). Specs, reports, the reference
   solution and other submissions are simply not there for it;
5. a seccomp filter: no socket but a Unix one (so no UDP, no raw or netlink
   socket either, which Landlock does not cover), no io_uring (which could
   open them behind the filter's back), no kernel keyring (add_key, request_key,
   keyctl: keys outlive the process), no new namespace (unshare or clone with a
   CLONE_NEW* flag, setns; clone3 cannot be filtered by its flags, so it fails
   with ENOSYS and the C library falls back to clone), no process outside its own
   tree (clone with CLONE_PARENT), so that a worker with no child has no process left;
6. as root, namespaces of its own: IPC (System V shared memory, message queues
   and semaphores, and POSIX message queues, die with the worker and are never
   shared with another) and network (no interface but a loopback that is down),
   and a read-only, empty ``/dev/shm``; and, where the host gives a writable
   cgroup, a memory and a process limit for the worker's whole tree
   (:mod:`grader.run.worker.cgroups`).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import stat
import sys
import sysconfig
from dataclasses import dataclass

PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 1
LANDLOCK_SCOPE_SIGNAL = 2
CLONE_NEWNS = 0x00020000
CLONE_NEWTIME, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x80, 0x02000000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
NAMESPACE_FLAGS = (
    CLONE_NEWNS
    | CLONE_NEWTIME
    | CLONE_NEWCGROUP
    | CLONE_NEWUTS
    | CLONE_NEWIPC
    | CLONE_NEWUSER
    | CLONE_NEWPID
    | CLONE_NEWNET
)
# A process made with CLONE_PARENT is its maker's sibling, not its child: the one way out of the
# worker's process tree, so refused with the namespace flags (nothing but that trick uses it).
CLONE_PARENT = 0x00008000
REFUSED_CLONE_FLAGS = NAMESPACE_FLAGS | CLONE_PARENT
MS_RDONLY = 1
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
WORK_DIR = "work"  # beneath the scratch directory: the only place a worker may write

# Filesystem access rights, by the Landlock ABI that introduced them.
_FS_V1 = (1 << 13) - 1  # execute .. make_sym
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_READ_ONLY = 1 | 4 | 8  # execute, read_file, read_dir
_NET_BIND_CONNECT = 1 | 2  # ABI 4


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


_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


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


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    try:
        version = _libc.syscall(
            SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION)
        )
    except Exception:  # noqa: BLE001 - no syscall() on this libc
        return 0
    return max(int(version), 0)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def apply_landlock(readable: tuple[str, ...], writable: tuple[str, ...]) -> int:
    """Restrict this process (and its future children) to the given paths. Returns the ABI used, 0 if none."""
    abi = landlock_abi()
    if abi < 1:
        return 0
    handled = _FS_V1
    if abi >= 2:
        handled |= _FS_REFER
    if abi >= 3:
        handled |= _FS_TRUNCATE
    if abi >= 5:
        handled |= _FS_IOCTL_DEV
    scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0
    attr = _RulesetAttr(handled, _NET_BIND_CONNECT if abi >= 4 else 0, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return 0
    try:
        read_rights = _READ_ONLY & handled
        write_rights = handled
        # one rule per path (a few hundred: the standard library's entries one by one): the
        # arguments that do not change are made once
        syscall, add_rule, open_path, fstat, close, is_dir = (
            _libc.syscall,
            ctypes.c_long(SYS_LANDLOCK_ADD_RULE),
            os.open,
            os.fstat,
            os.close,
            stat.S_ISDIR,
        )
        fd_of, beneath, no_flags = ctypes.c_int(ruleset), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH), ctypes.c_uint32(0)
        rule = _PathBeneath(0, -1)
        rule_ref = ctypes.byref(rule)
        for rights, paths in ((read_rights, readable), (write_rights, writable)):
            file_rights = rights & (
                1 | 2 | 4 | _FS_TRUNCATE | _FS_IOCTL_DEV
            )  # a rule on a file may only carry file rights
            for path in paths:
                try:
                    fd = open_path(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    rule.allowed_access = rights if is_dir(fstat(fd).st_mode) else file_rights
                    rule.parent_fd = fd
                    syscall(add_rule, fd_of, beneath, rule_ref, no_flags)
                finally:
                    close(fd)
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        if _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


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


# ------------------------------------------------------------------ seccomp
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
# machine: (AUDIT_ARCH_*, syscall numbers)
_SECCOMP_ARCH = {
    "x86_64": (
        0xC000003E,
        {
            "socket": 41,
            "io_uring_setup": 425,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "unshare": 272,
            "clone": 56,
            "clone3": 435,
            "setns": 308,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "socket": 198,
            "io_uring_setup": 425,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "unshare": 97,
            "clone": 220,
            "clone3": 435,
            "setns": 268,
        },
    ),
}
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_X32_SYSCALL_BIT = 0x40000000
_ARG0_LOW = 16  # offset of args[0]'s low 32 bits in struct seccomp_data (little-endian)


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _assemble(program: list[tuple]) -> list[tuple[int, int, int, int]]:
    """Classic BPF with labels: ``("label", name)`` marks a place; a jump's targets may be
    label names (resolved to the relative offsets BPF wants) or 0 (the next instruction)."""
    labels, position = {}, 0
    for item in program:
        if item[0] == "label":
            labels[item[1]] = position
        else:
            position += 1
    out = []
    for item in program:
        if item[0] == "label":
            continue
        code, jt, jf, k = item
        here = len(out)
        jt = labels[jt] - here - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - here - 1 if isinstance(jf, str) else jf
        out.append((code, jt, jf, k))
    return out


def seccomp_program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The filter every worker runs under (None on a machine it does not know)."""
    import errno

    known = _SECCOMP_ARCH.get(machine)
    if known is None:
        return None
    arch, nr = known
    return _assemble(
        [
            (_LD_ABS, 0, 0, 4),  # arch
            (_JEQ, 0, "eperm", arch),  # a foreign ABI (32-bit compat)
            (_LD_ABS, 0, 0, 0),  # syscall number
            (_JGE, "eperm", 0, _X32_SYSCALL_BIT),  # x32
            (_JEQ, "socket", 0, nr["socket"]),
            (_JEQ, "namespace_flags", 0, nr["unshare"]),
            (_JEQ, "namespace_flags", 0, nr["clone"]),
            (_JEQ, "enosys", 0, nr["clone3"]),  # its flags live in memory, out of a filter's reach
            (_JEQ, "eperm", 0, nr["io_uring_setup"]),
            (_JEQ, "eperm", 0, nr["add_key"]),
            (_JEQ, "eperm", 0, nr["request_key"]),
            (_JEQ, "eperm", 0, nr["keyctl"]),
            (_JEQ, "eperm", 0, nr["setns"]),
            (_RET, 0, 0, _RET_ALLOW),
            ("label", "socket"),
            (_LD_ABS, 0, 0, _ARG0_LOW),  # the address family
            (_JEQ, "allow", "eacces", 1),  # AF_UNIX only
            ("label", "namespace_flags"),
            (_LD_ABS, 0, 0, _ARG0_LOW),  # unshare's and clone's flags (the kernel reads their low 32 bits)
            (_JSET, "eperm", "allow", REFUSED_CLONE_FLAGS),
            ("label", "allow"),
            (_RET, 0, 0, _RET_ALLOW),
            ("label", "eacces"),
            (_RET, 0, 0, _RET_ERRNO | errno.EACCES),
            ("label", "enosys"),
            (_RET, 0, 0, _RET_ERRNO | errno.ENOSYS),
            ("label", "eperm"),
            (_RET, 0, 0, _RET_ERRNO | errno.EPERM),
        ]
    )


def apply_socket_filter() -> bool:
    """Forbid every socket family but AF_UNIX, io_uring, the kernel keyring, new namespaces,
    processes outside one's own tree (CLONE_PARENT), and every syscall of a foreign ABI (x32,
    32-bit compat), for this process and its children.
    False where unsupported."""
    program = seccomp_program(os.uname().machine)
    if program is None:
        return False
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    prog = _SockFprog(len(program), ctypes.cast(filters, ctypes.POINTER(_SockFilter)))
    try:
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
    except OSError:
        return False
    return _libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog), 0, 0) == 0


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
PR_SET_KEEPCAPS = 8
PR_CAPBSET_DROP = 24


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


def _private_tmpfs(work: str, uid: int, size: int) -> bool:
    """A mount namespace of this process's own, with a size-capped tmpfs on ``work``: a
    submission can fill that, never the grader's disk, and it vanishes with the worker.
    Needs CAP_SYS_ADMIN (root outside a restricted container); False where not possible."""
    if _libc.unshare(CLONE_NEWNS) != 0:
        return False
    if _libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:  # nothing propagates back out
        return False
    options = f"size={size},nr_inodes=4096,mode=0700,uid={uid},gid={uid}".encode()
    return _libc.mount(b"tmpfs", os.fsencode(work), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options) == 0


def private_namespaces(mount_namespace: bool) -> dict[str, bool]:
    """An IPC and a network namespace of this process's own (root only; each where the kernel
    allows it): System V IPC objects made here are invisible to every other worker and die with
    this one; no network interface but a loopback that is down. In a private mount namespace,
    also an empty, read-only /dev/shm (POSIX shared memory and semaphores live there, outside
    the IPC namespace). Returns what was applied."""
    applied = {
        "ipc_namespace": _libc.unshare(CLONE_NEWIPC) == 0,
        "net_namespace": _libc.unshare(CLONE_NEWNET) == 0,
    }
    if mount_namespace and os.path.isdir("/dev/shm"):
        options = b"size=4k,nr_inodes=1,mode=0555"
        applied["private_dev_shm"] = (
            _libc.mount(b"none", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, options) == 0
        )
    return applied


def probe_namespaces() -> dict[str, bool]:
    """What :func:`private_namespaces` would get here, tried in a throwaway child."""
    names = ("ipc_namespace", "net_namespace")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the probe itself
        try:
            os.close(r)
            got = private_namespaces(False)
            os.write(w, bytes(int(got[n]) for n in names))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return {n: bool(data[i]) if i < len(data) else False for i, n in enumerate(names)}


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
        applied["tmpfs"] = _private_tmpfs(work, plan.uid, plan.limits.scratch_bytes)
        applied.update(private_namespaces(bool(applied["tmpfs"])))
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
