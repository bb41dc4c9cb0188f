"""Hostile: an honest solution that publishes what each of its cases is handed (the op chain and
the input's shape, hidden cases included) through state kept on a file every sandbox may read,
the standard library's ``os.py``: POSIX record locks (``F_SETLK``) and open-file-description
locks (``F_OFD_SETLK``) at byte offsets that spell the text, a ``flock`` as a "ready" bit, and
a read of the file that an inotify watch would see. ``h51_lock_receiver``, graded at the same
time, looks for it.

Must get: every lock refused (it says so in its own output), exactly the honest score, and
nothing of its cases in the receiver's output (tests/test_isolation_channels.py)."""
import fcntl
import os
import struct

import _honest_core
import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403

SHARED = os.__file__
BASE = 1 << 20  # lock offsets start here: byte i of the message with value v locks BASE + 256 * i + v
F_OFD_SETLK = 37
_fd = os.open(SHARED, os.O_RDONLY)


def _lock(command, offset):
    fcntl.fcntl(_fd, command, struct.pack("hhqqi", fcntl.F_RDLCK, 0, offset, 1, 0))


def _publish(text):
    data = ("LOCKLEAK:" + text).encode()[:200]
    for command, name in ((fcntl.F_SETLK, "F_SETLK"), (F_OFD_SETLK, "F_OFD_SETLK")):
        kit.attempt(f"lock {name}", lambda: [_lock(command, BASE + 256 * i + v) for i, v in enumerate(data)])
    kit.attempt("lock flock", fcntl.flock, _fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    with open(SHARED, "rb") as f:  # an access an inotify watch (or the access time) would show
        f.read(1)


_publish("import")


def run_eager(ops, x):
    _publish(f"run_eager {list(ops)!r} {getattr(x, 'shape', None)}")
    return _honest_core.run_eager(ops, x)


def fuse_elementwise(ops):
    _publish(f"fuse {list(ops)!r}")
    return _honest_core.fuse_elementwise(ops)
