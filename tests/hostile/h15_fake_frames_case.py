"""Hostile: in every fusion case, forges the grader's protocol: a result frame claiming
success for this case, a "status: exit 0" control frame, results for later cases and a
"ready" frame, then garbage; written to stdout, to every descriptor from 0 to 255, and to
every descriptor of its parent (the worker, which holds the grader's pipes) reopened
through /proc/<ppid>/fd, before returning a correct value.

Must get: fusion cases fail (their result is malformed), no forged frame counts for
any case, every other case as the honest core's."""
import os

import _honest_core
import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403


def fuse_elementwise(ops):
    stream = kit.forged_stream(kit.case_uid())
    print(stream.decode("latin-1"), flush=True)
    hit = kit.write_every_fd(stream)
    print(f"[hostile] forged frames written to fds {hit}", flush=True)
    reopened = []
    for n in range(64):
        try:
            fd = os.open(f"/proc/{os.getppid()}/fd/{n}", os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.write(fd, stream)
            reopened.append(n)
        except OSError:
            pass
        finally:
            os.close(fd)
    print(f"[hostile] forged frames written to the worker's reopened fds {reopened}", flush=True)
    return _honest_core.fuse_elementwise(ops)
