"""Hostile: prints 100 MB (stdout and stderr) at import and in every fusion case, then does
the lab correctly.

Must get: its output capped (a bounded log and bounded tails in the report), the
batch on time; it earns its points honestly."""
import os
import sys

import _honest_core
from _honest_core import *  # noqa: F401,F403

CHUNK = (("flood " * 170) + "\n").encode() * 1000  # ~1 MB


def flood(total=100 << 20):
    written = 0
    for fd in (1, 2):
        for _ in range(total // len(CHUNK) // 2):
            try:
                written += os.write(fd, CHUNK)
            except OSError:  # the log is full (RLIMIT_FSIZE): give up on this stream
                break
    try:
        print("x" * (1 << 20))
    except OSError:
        pass
    return written


flood()


def fuse_elementwise(ops):
    flood()
    sys.stdout.flush()
    return _honest_core.fuse_elementwise(ops)
