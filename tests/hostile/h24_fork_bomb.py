"""Hostile: does the lab, and in every fusion case forks up to 300 processes that sleep
for a minute (capped, so that a run without a process limit stays survivable).

Must get: the fork fails at the process limit (run as root), every process is killed when
the case ends, nothing is left when grading ends."""
import os
import time

import _honest_core
from _honest_core import *  # noqa: F401,F403


def _bomb(n=300):
    made = 0
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        made += 1
    return made


def fuse_elementwise(ops):
    try:
        made = _bomb()
        print(f"[hostile] forked all {made}", flush=True)
    except OSError as exc:
        print(f"[hostile] fork refused: {exc}", flush=True)
    return _honest_core.fuse_elementwise(ops)
