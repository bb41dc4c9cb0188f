"""Hostile: looks, at import and in every case it runs, for what ``h50_lock_sender`` (graded at
the same time) publishes through locks on the standard library's ``os.py``: record locks
(``F_GETLK``), open-file-description locks (``F_OFD_GETLK``), a ``flock`` it cannot take, and
an inotify watch on the file; prints whatever it finds into its own visible output. It waits a
little (bounded) in each case, to give the sender's hidden cases time to run.

Must get: every probe refused, "found nothing" in every case, exactly the honest score, and no
trace of the sender's cases anywhere in its report (tests/test_isolation_channels.py)."""
import ctypes
import fcntl
import os
import struct
import time

import _honest_core
import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403

SHARED = os.__file__
BASE = 1 << 20
F_OFD_GETLK = 36
IN_ACCESS, IN_OPEN, IN_NONBLOCK = 0x1, 0x20, 0o4000
_fd = os.open(SHARED, os.O_RDONLY)
_libc = ctypes.CDLL(None, use_errno=True)


def _locked(command, offset):
    query = struct.pack("hhqqi", fcntl.F_WRLCK, 0, offset, 1, 0)
    return struct.unpack("hhqqi", fcntl.fcntl(_fd, command, query))[0] != fcntl.F_UNLCK


def _read_locks(command):
    data = bytearray()
    for i in range(200):
        value = next((v for v in range(256) if _locked(command, BASE + 256 * i + v)), None)
        if value is None:
            break
        data.append(value)
    return data.decode(errors="replace")


def _flock_taken():
    fcntl.flock(_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails with EWOULDBLOCK while the sender holds it
    fcntl.flock(_fd, fcntl.LOCK_UN)
    return ""


def _watch():
    fd = _libc.inotify_init1(IN_NONBLOCK)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    if _libc.inotify_add_watch(fd, os.fsencode(SHARED), IN_ACCESS | IN_OPEN) < 0:
        raise OSError(ctypes.get_errno(), "inotify_add_watch")
    return fd


_ok, _watch_fd = kit.attempt("inotify watch", _watch)


def _look(wait_s=0.0):
    found = []
    deadline = time.monotonic() + wait_s
    while True:
        for command, name in ((fcntl.F_GETLK, "F_GETLK"), (F_OFD_GETLK, "F_OFD_GETLK")):
            ok, text = kit.attempt(f"lock {name}", _read_locks, command)
            if ok and text:
                found.append(text)
        ok, _ = kit.attempt("lock flock", _flock_taken)
        if _ok:
            try:
                events = os.read(_watch_fd, 4096)
            except BlockingIOError:
                events = b""
            if events:
                found.append(f"inotify {len(events)} bytes of events")
        if found or time.monotonic() >= deadline:
            break
        time.sleep(0.01)
    if found:
        print(f"[hostile] lock FOUND {found}", flush=True)
    else:
        print("[hostile] lock channel: found nothing", flush=True)


_look()


def run_eager(ops, x):
    _look(0.02)
    return _honest_core.run_eager(ops, x)


def fuse_elementwise(ops):
    _look(0.02)
    return _honest_core.fuse_elementwise(ops)
