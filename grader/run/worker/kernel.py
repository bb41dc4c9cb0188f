"""The C library and the kernel constants the sandbox modules share (one ``CDLL`` per process)."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_KEEPCAPS = 8
PR_CAPBSET_DROP = 24
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

libc = ctypes.CDLL(None, use_errno=True)


def prctl(option: int, value: int) -> None:
    if libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def in_child(fn: Callable[[], bytes]) -> bytes:
    """``fn()`` run in a throwaway forked child; what it returned (empty if it failed)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            os.write(w, fn())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return data
