"""Hostile: every fusion case leaves background processes behind (``os.fork`` + ``setsid``
double fork, and ``subprocess.Popen(start_new_session=True)``) that live on, then try to
write fake results everywhere and fake frames into every descriptor they inherited.

Must get: every case graded as the honest core's (the leftovers are killed when the
case ends, before they can touch anything: no later case's output shows them), no
process left when grading ends, no file written outside the sandbox."""
import os
import subprocess
import sys
import time

import _honest_core
import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403


def _haunt(seconds):
    time.sleep(0.3)  # outlive the case first: everything below happens after it ended
    end = time.time() + seconds
    while time.time() < end:
        print("[hostile] daemon still alive after its case", flush=True)
        kit.write_everywhere("background")
        kit.write_every_fd(kit.forged_stream(kit.case_uid()), range(1, 64))
        time.sleep(0.05)


def _daemon():
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                _haunt(30)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def fuse_elementwise(ops):
    kit.attempt("daemon via double fork", _daemon)
    kit.attempt(
        "daemon via subprocess",
        subprocess.Popen,
        [sys.executable, "-c", "import time\nwhile True: time.sleep(1)"],
        start_new_session=True,  # out of the case's process group and session
        stdin=subprocess.DEVNULL,
    )
    return _honest_core.fuse_elementwise(ops)
