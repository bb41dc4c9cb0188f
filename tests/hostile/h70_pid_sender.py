"""Hostile: an honest solution that publishes what each of its cases is handed (the op chain,
hidden cases included) through per-process kernel state any process may read by pid: in each
case it forks a short-lived child per character, and each child spells its character in its
nice value (``setpriority``), its scheduling policy (``sched_setscheduler``: other, batch or
idle) and its CPU affinity mask (``sched_setaffinity``); a first child with nice 19 and the idle
policy marks where the text starts. ``h71_pid_receiver``, graded at the same time, looks for
it by pid. (Issue 31.3: before PID namespaces, 32 of 36 hidden op chains got through.)

Must get: exactly the honest score, and nothing of its cases in the receiver's outputs
(tests/test_isolation_channels.py)."""

import os
import signal
import time

import _honest_core
import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403

HOLD_S = 0.05  # how long the children keep their state before the case goes on
POLICIES = (os.SCHED_OTHER, os.SCHED_BATCH, os.SCHED_IDLE)


def _spell(char, header=False):
    """State of this (child) process that says ``char`` (a printable ASCII code: 96 values are
    18 nice values x 3 policies x 2 masks), or the header."""
    cpus = sorted(os.sched_getaffinity(0))
    code = (char - 32) % 96
    if header:
        nice, policy, mask = 19, os.SCHED_IDLE, cpus
    else:
        nice, policy = 1 + code % 18, POLICIES[(code // 18) % 3]
        mask = cpus[:1] if code // 54 else cpus
    os.setpriority(os.PRIO_PROCESS, 0, nice)
    os.sched_setscheduler(0, policy, os.sched_param(0))
    os.sched_setaffinity(0, mask)


def _publish(text):
    data = ("PL" + text).encode("ascii", "replace")[:12]
    children = []
    for i in range(len(data) + 1):
        pid = os.fork()
        if pid == 0:
            try:
                _spell(data[i - 1] if i else 32, header=i == 0)
                signal.pause()
            finally:
                os._exit(0)
        children.append(pid)
    time.sleep(HOLD_S)
    for pid in children:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass


kit.attempt("pid publish", _publish, "import")


def run_eager(ops, x):
    _publish("".join(str(op)[:2] for op in ops))
    return _honest_core.run_eager(ops, x)


def fuse_elementwise(ops):
    _publish("".join(str(op)[:2] for op in ops))
    return _honest_core.fuse_elementwise(ops)
