"""The worker's own view of the file system, and its IPC and network namespaces (root only).

In a mount namespace of the worker's own (nothing propagates back to the grader's):

1. every mount is made read-only and ``noatime`` (``mount_setattr`` on the whole tree): no
   process of the sandbox changes a file's access time, extended attributes or anything else
   another worker could see on a file both may read (the standard library, numpy);
2. every name the worker has no use for is hidden: in each folder on the way to a path the
   worker may read (its submission, the standard library, numpy, the grader's worker modules,
   the system's libraries) every other entry is covered by an empty, read-only folder or file
   (a folder with many such entries, ``/etc`` say, is covered whole by a read-only tmpfs that
   holds only the entries to show, each bound back from the original).
   Landlock refuses to open what is not on its allowlist, but it has no right for metadata:
   ``stat`` would still give the size and modification time of a hidden spec file, of the
   reference solution or of another submission, through folders that are world-traversable
   (or traversable with ``CAP_DAC_READ_SEARCH``, which a worker keeps under Landlock);
3. a size-capped tmpfs is the working directory (the only writable place): a submission can
   fill that, never the grader's disk, and it vanishes with the worker;
4. an empty, read-only ``/dev/shm`` (POSIX shared memory and semaphores live there, outside
   the IPC namespace).

``/proc``, ``/sys`` and ``/dev`` are pseudo file systems: nothing in them is hidden.
"""

from __future__ import annotations

import ctypes
import os
import stat
from dataclasses import dataclass

from grader.run.worker.kernel import CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, in_child, libc

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_NOATIME, MS_REC, MS_PRIVATE = 32, 4096, 1024, 16384, 1 << 18
MNT_DETACH = 2
SYS_MOUNT_SETATTR = 442  # the same number on x86_64 and aarch64 (Linux 5.12)
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME = 0x1, 0x10, 0x70
PSEUDO_FILE_SYSTEMS = ("/proc", "/sys", "/dev")
EMPTY_FOLDER, EMPTY_FILE = "folder", "file"
COVER_ONE_BY_ONE = 64  # names to cover in one folder; more: the folder is rebuilt (one mount per name shown)


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def mount(source: bytes | None, target: str, fstype: bytes | None, flags: int, data: bytes | None = None) -> bool:
    return libc.mount(source, os.fsencode(target), fstype, ctypes.c_ulong(flags), data) == 0


def _read_only_everywhere() -> bool:
    """Every mount of this (private) namespace read-only and noatime: in one call, or (before
    Linux 5.12) one remount per mount point."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME, 0, 0)
    done = libc.syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_int(AT_FDCWD),
        b"/",
        ctypes.c_uint(AT_RECURSIVE),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    return done == 0 or remount_each()


def remount_each() -> bool:
    """The fallback of :func:`_read_only_everywhere`: a read-only, noatime bind remount of each
    mount point, keeping its nosuid/nodev/noexec flags (a remount must not drop them)."""
    kept = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}
    try:
        with open("/proc/self/mountinfo") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return False
    done = True
    for fields in mounts:
        if len(fields) < 6:
            continue
        point = fields[4].encode().decode("unicode_escape")  # mountinfo writes spaces as \040
        flags = sum(kept.get(option, 0) for option in fields[5].split(","))
        done &= mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOATIME | flags)
    return done


def _inside(path: str, folders: set[str]) -> bool:
    """``path`` is one of ``folders`` or lies beneath one (by name)."""
    while True:
        if path in folders:
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


@dataclass(frozen=True)
class FolderView:
    """One folder on the way to a kept path: the entries to show and those to cover."""

    folder: str
    mode: int
    shown: tuple[tuple[str, int], ...]  # (name, st_mode): kept, on the way, pseudo, links
    covered: tuple[tuple[str, int], ...]


# The resolved form of the paths every worker reads whatever it grades (the standard library,
# numpy, the grader's worker modules, the system's libraries): filled once in the zygote with
# the list itself (grader.run.worker.sandbox.python_readable_paths, which finds it once per
# process), inherited by every worker it forks. Resolving the ~240 of them again in each worker
# cost about 7 ms of its start. A submission's and a worker's own paths are resolved every time.
STABLE_REAL_PATHS: dict[str, str] = {}


def remember_real_paths(paths) -> None:
    """Resolve ``paths`` (that exist) once, for every :func:`hidden_entries` after."""
    STABLE_REAL_PATHS.update((p, os.path.realpath(p)) for p in paths if p and os.path.lexists(p))


def _real(path: str) -> str:
    known = STABLE_REAL_PATHS.get(path)
    return known if known is not None else os.path.realpath(path)


def _kind(entry: os.DirEntry) -> int:
    """An entry's file type as ``st_mode`` type bits, from the folder's listing (no ``lstat`` but
    where the file system does not give the type): what covering it needs (link, folder, other)."""
    if entry.is_symlink():
        return stat.S_IFLNK
    return stat.S_IFDIR if entry.is_dir(follow_symlinks=False) else stat.S_IFREG


def hidden_entries(keep: tuple[str, ...]) -> list[FolderView]:
    """Every folder on the way to a kept path (parents first), with what to cover in it so that
    only ``keep`` (and the folders on the way to each) can be found by name: every entry that is
    neither kept nor on the way to a kept path. Links are shown as they are (a mount on one would
    cover its target), and nothing is looked into beneath a kept path or in a pseudo file system."""
    kept = {_real(p) for p in keep if p and (p in STABLE_REAL_PATHS or os.path.lexists(p))}
    on_the_way: set[str] = set()
    for path in kept:
        parent = os.path.dirname(path)
        while parent not in on_the_way:
            on_the_way.add(parent)
            if parent == os.path.dirname(parent):
                break
            parent = os.path.dirname(parent)
    pseudo = set(PSEUDO_FILE_SYSTEMS)
    views: list[FolderView] = []
    for folder in sorted(on_the_way):
        if _inside(folder, kept) or _inside(folder, pseudo):
            continue
        try:
            mode = os.lstat(folder).st_mode
            with os.scandir(folder) as listing:
                entries = [(e.name, e.path, _kind(e)) for e in listing]
        except OSError:
            continue
        shown, covered = [], []
        for name, path, entry_mode in entries:
            visible = path in kept or path in on_the_way or path in pseudo or stat.S_ISLNK(entry_mode)
            (shown if visible else covered).append((name, entry_mode))
        if covered:
            views.append(FolderView(folder, mode, tuple(shown), tuple(covered)))
    return views


def _rebuild(view: FolderView) -> int:
    """Cover a folder with many names to hide by a tmpfs of its own that holds only what is shown
    (each bound back from the original, links copied): one mount per shown entry instead of one
    per covered entry. Returns how many entries it covers (0 where it failed)."""
    originals: dict[str, int] = {}
    links: dict[str, str] = {}
    try:
        for name, mode in view.shown:
            path = os.path.join(view.folder, name)
            if stat.S_ISLNK(mode):
                links[name] = os.readlink(path)
            else:
                originals[name] = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        options = f"size=64k,nr_inodes={len(view.shown) + 2},mode={stat.S_IMODE(view.mode):o}".encode()
        if not mount(b"tmpfs", view.folder, b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options):
            return 0
        mode_of = dict(view.shown)
        for name, target in links.items():
            os.symlink(target, os.path.join(view.folder, name))
        for name in originals:
            mount_point = os.path.join(view.folder, name)
            if stat.S_ISDIR(mode_of[name]):
                os.mkdir(mount_point, 0o755)
            else:
                os.close(os.open(mount_point, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444))
        mount(None, view.folder, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for name, fd in originals.items():
            mount(f"/proc/self/fd/{fd}".encode(), os.path.join(view.folder, name), None, MS_BIND | MS_REC)
        return len(view.covered)
    except OSError:
        return 0
    finally:
        for fd in originals.values():
            os.close(fd)


def _hide(keep: tuple[str, ...], helper: str) -> int:
    """Cover what :func:`hidden_entries` names: one by one with an empty read-only tmpfs mounted on
    ``helper`` (an empty folder in it for folders, an empty file for the rest), or, in a folder
    with more than ``COVER_ONE_BY_ONE`` names to cover, the whole folder (:func:`_rebuild`).
    Returns how many entries were covered, -1 if none could be."""
    if not mount(b"tmpfs", helper, b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"size=4k,nr_inodes=3,mode=0555"):
        return -1
    try:
        empty_folder, empty_file = os.path.join(helper, EMPTY_FOLDER), os.path.join(helper, EMPTY_FILE)
        os.mkdir(empty_folder, 0o555)
        os.close(os.open(empty_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444))
        if not mount(None, helper, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC):
            return -1
        count = 0
        for view in hidden_entries(keep):  # parents first: a rebuilt folder's children are bound back
            if len(view.covered) > COVER_ONE_BY_ONE:
                count += _rebuild(view)
                continue
            for name, mode in view.covered:
                source = empty_folder if stat.S_ISDIR(mode) else empty_file
                count += mount(os.fsencode(source), os.path.join(view.folder, name), None, MS_BIND)
        return count
    finally:
        libc.umount2(os.fsencode(helper), ctypes.c_int(MNT_DETACH))  # the covers keep it alive


def private_view(work: str, uid: int, size: int, keep: tuple[str, ...]) -> dict[str, object]:
    """A mount namespace of this process's own (see the module's docstring). Needs
    CAP_SYS_ADMIN (root outside a restricted container); each part where possible.
    Returns what was applied: ``tmpfs`` (False: no namespace at all), ``read_only_view``,
    ``hidden`` (how many entries were covered, -1 where that failed)."""
    if libc.unshare(CLONE_NEWNS) != 0:
        return {"tmpfs": False}
    if not mount(b"none", "/", None, MS_REC | MS_PRIVATE):  # nothing propagates back out
        return {"tmpfs": False}
    applied: dict[str, object] = {"read_only_view": _read_only_everywhere()}
    applied["hidden"] = _hide(tuple(keep) + (work,), work)
    options = f"size={size},nr_inodes=4096,mode=0700,uid={uid},gid={uid}".encode()
    applied["tmpfs"] = mount(b"tmpfs", work, b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options)
    return applied


def private_namespaces(mount_namespace: bool, pid_namespace: bool = False) -> dict[str, bool]:
    """An IPC and a network namespace of this process's own (root only; each where the kernel
    allows it): System V IPC objects made here are invisible to every other worker and die with
    this one; no network interface but a loopback that is down. In a private mount namespace,
    also an empty, read-only /dev/shm (POSIX shared memory and semaphores live there, outside
    the IPC namespace), and, for a process forked into a PID namespace of its own
    (:mod:`grader.run.worker.pidns`), a read-only /proc of that namespace: only its own
    processes are there. Returns what was applied."""
    applied = {
        "ipc_namespace": libc.unshare(CLONE_NEWIPC) == 0,
        "net_namespace": libc.unshare(CLONE_NEWNET) == 0,
    }
    if pid_namespace:
        flags = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY
        applied["pid_namespace"] = mount_namespace and mount(b"proc", "/proc", b"proc", flags)
    if mount_namespace and os.path.isdir("/dev/shm"):
        options = b"size=4k,nr_inodes=1,mode=0555"
        applied["private_dev_shm"] = mount(
            b"none", "/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, options
        )
    return applied


def probe_mount_namespace() -> bool:
    """Whether a worker can have a mount namespace of its own here (what :func:`private_view`
    starts with), tried in a throwaway child."""

    def probe() -> bytes:
        private = libc.unshare(CLONE_NEWNS) == 0 and mount(b"none", "/", None, MS_REC | MS_PRIVATE)
        return b"1" if private else b"0"

    return in_child(probe) == b"1"


def probe_namespaces() -> dict[str, bool]:
    """What :func:`private_namespaces` would get here, tried in a throwaway child."""
    names = ("ipc_namespace", "net_namespace")
    data = in_child(lambda: bytes(int(got[n]) for got in [private_namespaces(False)] for n in names))
    return {n: bool(data[i]) if i < len(data) else False for i, n in enumerate(names)}
