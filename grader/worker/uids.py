"""Sandbox uids that one grading run holds alone.

Run as root, each worker runs under a uid of its own, and ending a worker means
killing *every* process of that uid. That is only safe if no other grading run
on the machine uses the same uid at the same time (an instructor grading two
batches at once, or CI jobs in parallel): otherwise one run's clean-up kills
the other run's cases. So a run leases its uids: an exclusive ``flock`` on
``<lock dir>/<uid>.lock``, held for as long as the lease object lives and
released by the kernel if the grader dies. A uid whose lock is held elsewhere is
skipped.
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
import threading

UID_BASE = 61000
UID_COUNT = 1000  # 61000 .. 61999
LOCK_DIR_NAME = "graphgrade-uids"


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
                fd = os.open(os.path.join(self._dir, f"{uid}.lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                self._held[slot] = (uid, fd)
                return uid
        raise NoFreeUid(f"all {self.count} sandbox uids from {self.base} are leased by other grading runs")

    def close(self) -> None:
        with self._lock:
            for _, fd in self._held.values():
                os.close(fd)
            self._held.clear()
