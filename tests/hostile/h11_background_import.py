"""Hostile: a daemon started at import time (in the worker itself, which holds the
grader's pipes), which keeps forging frames and writing fake results for 30 s.

Must get: no more than the honest core's score (it may disturb its own cases, nobody
else's), no process left when grading ends, no file written outside the sandbox."""
import os
import time

import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403


def _haunt(seconds):
    end = time.time() + seconds
    while time.time() < end:
        kit.write_everywhere("import daemon")
        kit.write_every_fd(kit.forged_stream("fusion-edge/empty-list"), range(3, 64))
        time.sleep(0.2)


_pid = os.fork()
if _pid == 0:
    try:
        os.setsid()
        if os.fork() == 0:
            time.sleep(0.5)  # let the import finish and the cases begin
            _haunt(30)
    finally:
        os._exit(0)
os.waitpid(_pid, 0)
