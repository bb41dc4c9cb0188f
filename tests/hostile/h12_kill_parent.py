"""Hostile: kills its parent (the worker) in every fusion case, then anything that looks
like the grader, its zygote or the test runner (pids found in /proc), then kill(-1).

Must get: fusion cases crashed, every other case as the honest core's (the worker is
replaced), and the grader alive to finish the batch."""
import os
import signal

import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403


def fuse_elementwise(ops):
    for pid in kit.grader_pids():
        kit.attempt(f"kill grader-like pid {pid}", os.kill, pid, signal.SIGKILL)
    kit.attempt("kill the process group of pid 1", os.kill, -1, signal.SIGKILL)
    os.kill(os.getppid(), signal.SIGKILL)
    return []
