"""Sandbox uids that one grading run holds alone.

Run as root, each worker runs under a uid of its own, and ending a worker means
killing *every* process of that uid. That is only safe if no other grading run
on the machine uses the same uid at the same time (an instructor grading two
batches at once, or CI jobs in parallel): otherwise one run's clean-up kills
the other run's cases. So a run leases its uids: an exclusive ``flock`` on
``<lock dir>/<uid>.lock``, held for as long as the lease object lives and
released by the kernel if the grader dies. A uid whose lock is held elsewhere is
skipped. Leasing and releasing a uid removes its System V IPC objects; the zygote also
removes them, and empties the uid's keyrings, before each worker starts and after it ends.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import stat
import tempfile
import threading

UID_BASE = 61000
UID_COUNT = 1000  # 61000 .. 61999
LOCK_DIR_NAME = "graphgrade-uids"


_libc = ctypes.CDLL(None, use_errno=True)
IPC_RMID = 0
KEYCTL_CLEAR = 7
KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -4, -5
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}
_IPC_KINDS = {"shm": ("shmid", "shmctl"), "msg": ("msqid", "msgctl"), "sem": ("semid", "semctl")}


def remove_ipc_objects(uid: int) -> int:
    """Remove every System V shared memory segment, message queue and semaphore set in this
    IPC namespace that ``uid`` owns or created (needs root); returns how many. A worker has an
    IPC namespace of its own where the kernel allows it, so this matters where it does not: what
    one submission left there would otherwise reach the next one to get this uid."""
    removed = 0
    for kind, (id_column, call) in _IPC_KINDS.items():
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                header, *rows = f.read().splitlines()
        except OSError:
            continue
        names = header.split()
        try:
            at_id, at_uid, at_cuid = names.index(id_column), names.index("uid"), names.index("cuid")
        except ValueError:
            continue
        for row in rows:
            fields = row.split()
            try:
                if uid not in (int(fields[at_uid]), int(fields[at_cuid])):
                    continue
                ident = int(fields[at_id])
            except (IndexError, ValueError):
                continue
            function = getattr(_libc, call)
            result = function(ident, 0, IPC_RMID, None) if kind == "sem" else function(ident, IPC_RMID, None)
            removed += result == 0
    return removed


def clear_own_keys() -> None:
    """Empty the calling user's keyrings (user and user-session), which outlive its processes.
    Called by a process that has just become a sandbox uid."""
    number = _SYS_KEYCTL.get(os.uname().machine)
    if number is None:
        return
    for keyring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        _libc.syscall(number, ctypes.c_int(KEYCTL_CLEAR), ctypes.c_int(keyring))


class NoFreeUid(RuntimeError):
    """Every sandbox uid is leased by another grading run."""


def _lock_dir() -> str:
    """A root-owned, private folder for the lock files (never one another user prepared)."""
    for base in ("/run", tempfile.gettempdir()):
        path = os.path.join(base, LOCK_DIR_NAME)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            continue
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022:
            return path
    raise NoFreeUid("no private folder for sandbox uid locks (/run/graphgrade-uids or $TMPDIR/graphgrade-uids)")


class UidLease:
    """Leases one uid per slot, on first use, for the life of this object (thread-safe)."""

    def __init__(self, base: int = UID_BASE, count: int = UID_COUNT) -> None:
        self.base, self.count = base, count
        self._held: dict[int, tuple[int, int]] = {}  # slot -> (uid, lock fd)
        self._lock = threading.Lock()
        self._dir: str | None = None

    def uid(self, slot: int) -> int:
        with self._lock:
            if slot in self._held:
                return self._held[slot][0]
            if self._dir is None:
                self._dir = _lock_dir()
            taken = {uid for uid, _ in self._held.values()}
            start = self.base + (slot % self.count)  # slot N tries 61000+N first, as before
            for offset in range(self.count):
                uid = self.base + (start - self.base + offset) % self.count
                if uid in taken:
                    continue
                fd = os.open(
                    os.path.join(self._dir, f"{uid}.lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
                )
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                self._held[slot] = (uid, fd)
                remove_ipc_objects(uid)  # left by an earlier run (its keys go when the zygote first uses it)
                return uid
        raise NoFreeUid(f"all {self.count} sandbox uids from {self.base} are leased by other grading runs")

    def close(self) -> None:
        with self._lock:
            for uid, fd in self._held.values():
                remove_ipc_objects(uid)
                os.close(fd)
            self._held.clear()
