"""``--isolation module``: a case starts without the memory the case before it held.

In ``--isolation process`` every case is a process forked from the worker as the submission's
import left it, so it starts with that much memory and no more. In module isolation the cases
share one process: whatever the previous case allocated and did not give back (module globals
of the submission's last execution, reachable only through reference cycles until the
collector runs; heap the C library keeps) still counts against the worker's limits (the
cgroup's 1 GiB, the 4 GiB address space) when the next case allocates. A submission that takes
700 MiB in every case then passed every case in one mode and lost 43 in the other (issue 31.5).

So after each case the worker compares its resident and virtual size with what it had once the
submission was first imported. Within :data:`SLACK_BYTES` of that (every honest case measured),
nothing more is done: one read of ``/proc/self/statm``. Past it, the submission's modules are
dropped (as before the next case anyway), the collector runs and the C library gives its free
heap back (``malloc_trim``); a worker still past it retires, and the next case starts in a fresh
worker, as in process isolation. What remains different is at most :data:`SLACK_BYTES` of memory
a case may find already used (SECURITY.md, "Isolation modes").
"""

from __future__ import annotations

import ctypes
import gc
import os
from collections.abc import Callable
from dataclasses import dataclass

SLACK_BYTES = 64 << 20
_PAGE = os.sysconf("SC_PAGE_SIZE")


def footprint() -> tuple[int, int]:
    """This process's (resident, virtual) size in bytes; (0, 0) where unknown."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return 0, 0
    try:
        fields = os.read(fd, 256).split()
        return int(fields[1]) * _PAGE, int(fields[0]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0, 0
    finally:
        os.close(fd)


def _malloc_trim() -> None:
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


@dataclass(frozen=True)
class Ceiling:
    """What a case may leave held: the first import's footprint plus :data:`SLACK_BYTES`."""

    resident: int
    virtual: int

    @classmethod
    def after_import(cls) -> Ceiling:
        resident, virtual = footprint()
        return cls(resident + SLACK_BYTES, virtual + SLACK_BYTES)

    def exceeded(self) -> bool:
        resident, virtual = footprint()
        return resident > self.resident or virtual > self.virtual

    def held_after(self, drop_submission: Callable[[], None]) -> bool:
        """Whether the next case would start with more than the ceiling: checked cheaply, and
        only when over it, again once the submission's modules are dropped and the collector and
        the C library have given back what they can."""
        if not self.exceeded():
            return False
        drop_submission()
        gc.collect()
        _malloc_trim()
        return self.exceeded()
