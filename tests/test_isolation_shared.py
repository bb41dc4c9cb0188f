"""Integrity round 3 (issue 25), tested directly: nothing a worker does to a file another worker
can also read is visible to that other worker (file locks of every kind, leases, watches,
page-cache probes, access times), and nothing of the grader's own folders can be found by name,
``stat`` included.

Each test confines a forked child exactly as a worker is confined (``test_sandbox.confined``) and
runs the same probe once unconfined as well, so that a probe that could never succeed cannot pass
for a defence. ``tests/test_isolation_channels.py`` attacks the same layers end to end, through
``graphgrade grade``.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_isolation import NR, libc, needs_seccomp  # noqa: E402
from test_sandbox import IS_ROOT, confined, layout, lease, needs_root  # noqa: E402,F401 - fixtures

from grader.run.worker import kernel, mounts, sandbox, seccomp  # noqa: E402

SHARED_FILE = os.__file__  # the standard library's os.py: every worker may read it
FAN_CLASS_NOTIF, FAN_REPORT_FID, POSIX_FADV_DONTNEED = 0, 0x200, 4


def _errno_of(fn) -> str:
    """``allowed`` or the errno's name."""
    try:
        result = fn()
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    if isinstance(result, int) and result < 0:
        return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    return "allowed"


def _raw(name, *args):
    def call():
        ctypes.set_errno(0)
        result = libc.syscall(ctypes.c_long(NR[name]), *args)
        if result >= 0 and name in ("inotify_init1", "fanotify_init"):
            os.close(result)
        return result

    return call


def _lock_probes(_applied=None) -> dict:
    """Every way to leave or read state on a shared file's inode, tried on os.py (read-only)."""
    fd = os.open(SHARED_FILE, os.O_RDONLY)
    folder = os.open(".", os.O_RDONLY)  # the working directory: one a worker may open
    flock = struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 1, 0)
    query = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 1, 0)
    found = {
        "flock": _errno_of(lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
        "F_SETLK": _errno_of(lambda: fcntl.fcntl(fd, fcntl.F_SETLK, flock)),
        "F_SETLKW": _errno_of(lambda: fcntl.fcntl(fd, fcntl.F_SETLKW, flock)),
        "F_GETLK": _errno_of(lambda: fcntl.fcntl(fd, fcntl.F_GETLK, query)),
        "F_OFD_SETLK": _errno_of(lambda: fcntl.fcntl(fd, seccomp.F_OFD_SETLK, flock)),
        "F_OFD_SETLKW": _errno_of(lambda: fcntl.fcntl(fd, seccomp.F_OFD_SETLKW, flock)),
        "F_OFD_GETLK": _errno_of(lambda: fcntl.fcntl(fd, seccomp.F_OFD_GETLK, query)),
        "lockf": _errno_of(lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
        "F_GETLEASE": _errno_of(lambda: fcntl.fcntl(fd, seccomp.F_GETLEASE)),
        "F_NOTIFY": _errno_of(lambda: fcntl.fcntl(folder, seccomp.F_NOTIFY, 0)),  # 0: no watch (SIGIO)
        "fadvise": _errno_of(lambda: os.posix_fadvise(fd, 0, 4096, POSIX_FADV_DONTNEED)),
        "preadv2_nowait": _errno_of(lambda: os.preadv(fd, [bytearray(16)], 0, os.RWF_NOWAIT)),
        # what a worker still needs
        "F_GETFD": _errno_of(lambda: fcntl.fcntl(fd, fcntl.F_GETFD)),
        "F_SETFL": _errno_of(lambda: fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)),
        "F_DUPFD_CLOEXEC": _errno_of(lambda: os.close(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10))),
        "preadv": _errno_of(lambda: os.preadv(fd, [bytearray(16)], 0)),
    }
    if NR:
        found["inotify_init1"] = _errno_of(_raw("inotify_init1", ctypes.c_int(0)))
        found["fanotify_init"] = _errno_of(
            _raw("fanotify_init", ctypes.c_uint(FAN_CLASS_NOTIF | FAN_REPORT_FID), ctypes.c_uint(os.O_RDONLY))
        )
        found["cachestat"] = _errno_of(_raw("cachestat", ctypes.c_int(fd), None, None, ctypes.c_uint(0)))
    os.close(fd)
    os.close(folder)
    return found


REFUSED = (
    "flock",
    "F_SETLK",
    "F_SETLKW",
    "F_GETLK",
    "F_OFD_SETLK",
    "F_OFD_SETLKW",
    "F_OFD_GETLK",
    "lockf",
    "F_GETLEASE",
    "F_NOTIFY",
    "fadvise",
    "preadv2_nowait",
    "inotify_init1",
    "fanotify_init",
    "cachestat",
)
STILL_WORK = ("F_GETFD", "F_SETFL", "F_DUPFD_CLOEXEC", "preadv")


def _unconfined(probe) -> dict:
    """``probe()`` in a forked child with no sandbox at all (the control)."""
    return json.loads(kernel.in_child(lambda: json.dumps(probe()).encode()))


@needs_seccomp
def test_file_locks_leases_watches_and_page_cache_probes_are_refused(layout):
    """A sender and a receiver graded at once share every file both may read; locks, leases,
    watches and the page cache are state on that file which each could see the other change.
    Inside the sandbox every such call fails with EPERM; outside it each one works (the
    control), and the fcntl commands a worker needs still work inside."""
    plan, _, _ = layout
    outside = _unconfined(_lock_probes)
    inside = confined(plan, _lock_probes)
    assert inside["applied"]["socket_filter"]
    for name in REFUSED:
        assert inside[name] == "EPERM", (name, inside[name])
    control = [name for name in REFUSED if outside[name] != "allowed"]
    # fanotify without CAP_SYS_ADMIN needs FAN_REPORT_FID support, cachestat Linux 6.5, and
    # F_NOTIFY, RWF_NOWAIT and F_SETLKW may be refused by a file system or block on the control's
    # own lock: the core of the channel (flock, record and OFD locks) must work unconfined.
    assert not {"flock", "F_SETLK", "F_GETLK", "F_OFD_SETLK", "F_OFD_GETLK", "lockf"} & set(control), outside
    for name in STILL_WORK:
        assert inside[name] == outside[name] == "allowed", (name, inside[name], outside[name])


def test_the_filter_refuses_every_lock_command_and_call_it_names():
    """Each refused fcntl command and call is in the program, on every machine it knows."""
    for machine, (_, numbers) in seccomp.SECCOMP_ARCH.items():
        program = seccomp.seccomp_program(machine)
        constants = {k for *_, k in program}
        for call in seccomp.REFUSED_CALLS:
            if call in numbers:
                assert numbers[call] in constants, (machine, call)
        assert set(seccomp.REFUSED_FCNTL) <= constants
        for _code, jt, jf, _ in program:
            assert 0 <= jt < 256 and 0 <= jf < 256  # BPF jumps are one byte


# ------------------------------------------------------------------ the worker's mount namespace
def _view_possible() -> bool:
    if not IS_ROOT:
        return False
    pid = os.fork()
    if pid == 0:  # pragma: no cover - a throwaway probe
        os._exit(0 if libc.unshare(mounts.CLONE_NEWNS) == 0 else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


needs_view = pytest.mark.skipif(
    not _view_possible(), reason="no private mount namespace (not root, or no CAP_SYS_ADMIN)"
)


def _stat(path) -> list | str:
    try:
        st = os.stat(path)
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    return [st.st_size, st.st_mtime_ns, st.st_ino]


@needs_view
def test_stat_finds_nothing_of_the_graders_folders(layout):
    """Landlock has no right for metadata: without the covering mounts, stat gives the size and
    mtime of a hidden spec file. Inside, neither the specs, the reference, another slot's
    submission nor a secret beside the scratch can be found by name (in a folder with few names to
    cover, one by one; in a crowded one, the folder whole); the submission's own files, the
    standard library and numpy can."""
    import numpy

    import reference
    import specs

    plan, code, outside = layout
    crowd = Path(plan.scratch).parent
    for i in range(mounts.COVER_ONE_BY_ONE + 10):  # a crowded folder is covered whole, not name by name
        (crowd / f"crowd{i:03}.yaml").write_text("visibility: hidden\n")
    other = Path(plan.scratch).parent / "slot1"
    other.mkdir()
    (other / "cudagraph.py").write_text("another submission\n")
    paths = {
        "spec_file": Path(specs.__file__).resolve().parent / "01_launch_counter.yaml",
        "reference": Path(reference.__file__).resolve().parent / "cudagraph.py",
        "secret": outside / "secret.yaml",
        "other_slot": other / "cudagraph.py",
        "repo_readme": Path(specs.__file__).resolve().parents[1] / "README.md",
        "crowded": crowd / "crowd000.yaml",
    }
    visible = {"own_code": code / "cudagraph.py", "stdlib": Path(SHARED_FILE), "numpy": Path(numpy.__file__)}
    everything = {**paths, **visible}

    def probe(applied):
        return {name: _stat(path) for name, path in everything.items()}

    answer = confined(plan, probe)
    assert answer["applied"]["hidden"] > 0 and answer["applied"]["read_only_view"]
    for name, path in paths.items():
        real = _stat(path)
        assert isinstance(real, list), (name, real)  # it is there, outside
        assert answer[name] == "ENOENT" or (answer[name][0] == 0 and answer[name][1:] != real[1:]), (name, answer[name])
    for name, path in visible.items():
        assert answer[name] == _stat(path), name
    # a covered folder is empty (where Landlock lets it be listed at all)
    specs_dir = Path(specs.__file__).resolve().parent
    listing = confined(
        plan, lambda applied: {"listing": _errno_of(lambda: os.listdir(specs_dir)) or os.listdir(specs_dir)}
    )
    assert listing["listing"] in ("EACCES", "allowed")
    unlocked = sandbox.SandboxPlan(**{**plan.__dict__, "use_landlock": False})
    assert confined(unlocked, lambda applied: {"listing": os.listdir(specs_dir)})["listing"] == []


@needs_view
def test_reading_a_shared_file_leaves_its_access_time(layout):
    """A receiver could watch a shared file's access time for a sender's reads; in the worker's
    mount namespace every mount is noatime (and read-only). The control: read outside, the same
    file's access time moves (relatime updates an access time older than the modification)."""
    plan, code, _ = layout
    shared = code / "shared.txt"
    shared.write_text("data\n")
    mtime = shared.stat().st_mtime_ns
    old = 10**18  # 2001: older than the modification time

    def read(_applied=None):
        with open(shared, "rb") as f:
            f.read()
        return {}

    os.utime(shared, ns=(old, mtime))
    _unconfined(read)
    if shared.stat().st_atime_ns == old:
        pytest.skip("this folder's own mount never updates access times (noatime): nothing to compare")
    os.utime(shared, ns=(old, mtime))  # the control moved it: back to the old time
    confined(plan, read)
    assert shared.stat().st_atime_ns == old
    written = confined(plan, lambda applied: {"xattr": _errno_of(lambda: os.setxattr(shared, "user.gg", b"1"))})
    assert written["xattr"] in ("EROFS", "EACCES", "EPERM", "ENOTSUP")


@needs_view
def test_the_remount_fallback_makes_every_mount_read_only(tmp_path):
    """Before Linux 5.12 (no mount_setattr) each mount point is remounted read-only and noatime;
    the grader's own view is untouched (a private namespace of a throwaway child)."""

    def probe() -> bytes:
        libc.unshare(mounts.CLONE_NEWNS)
        mounts.mount(b"none", "/", None, mounts.MS_REC | mounts.MS_PRIVATE)
        done = mounts.remount_each()
        return json.dumps({"done": done, "write": _errno_of(lambda: (tmp_path / "x").write_text("x"))}).encode()

    answer = json.loads(kernel.in_child(probe))
    assert answer == {"done": True, "write": "EROFS"}
    (tmp_path / "y").write_text("y")  # the grader's view is still writable
