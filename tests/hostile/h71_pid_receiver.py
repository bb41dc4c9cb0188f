"""Hostile: looks, at import and in every case it runs, for every process it can find by pid
(``getpriority`` of pid 1..32767, and of every other sandbox uid with ``PRIO_USER``) and for what ``h70_pid_sender`` (graded at the same time)
spells into its children's nice values, scheduling policies and CPU affinity masks; asks every
by-pid call of each process it finds (``sched_getaffinity``, ``getpriority``,
``sched_getscheduler``, ``sched_getparam``, ``getpgid``, ``getsid``, ``pidfd_open``, ``prlimit``,
``kill(pid, 0)``) and prints what it finds into its own visible output. It waits a little
(bounded) in each case, to give the sender's hidden cases time to run.

Must get: no process but its own, its parent and pid 1 (its namespace's init) ever found,
exactly the honest score, and no trace of the sender anywhere in its outputs
(tests/test_isolation_channels.py)."""

import os
import resource
import time

import _honest_core
from _honest_core import *  # noqa: F401,F403

SCAN = range(1, 1 << 15)
POLICIES = (os.SCHED_OTHER, os.SCHED_BATCH, os.SCHED_IDLE)
SCAN_BUDGET_S = 4.0  # the whole run's scanning, so that the budget goes to the cases
_spent = [0.0]


def _visible():
    """Every pid that names a process here, but this one, its parent and pid 1."""
    found = []
    for pid in SCAN:
        try:
            os.getpriority(os.PRIO_PROCESS, pid)
        except OSError:
            continue
        found.append(pid)
    return [pid for pid in found if pid not in (os.getpid(), os.getppid(), 1)]


def _other_uids():
    """Sandbox uids (61000-61999) with a process this one can find by uid (``getpriority`` and
    ``PRIO_USER``), but its own."""
    found = []
    for uid in range(61000, 62000):
        if uid == os.getuid():
            continue
        try:
            os.getpriority(os.PRIO_USER, uid)
        except OSError:
            continue
        found.append(uid)
    return found


def _probe(pid):
    """Every by-pid call of ``pid`` that answers."""
    calls = {
        "sched_getaffinity": lambda: os.sched_getaffinity(pid),
        "getpriority": lambda: os.getpriority(os.PRIO_PROCESS, pid),
        "sched_getscheduler": lambda: os.sched_getscheduler(pid),
        "sched_getparam": lambda: os.sched_getparam(pid),
        "getpgid": lambda: os.getpgid(pid),
        "getsid": lambda: os.getsid(pid),
        "pidfd_open": lambda: os.close(os.pidfd_open(pid)),
        "prlimit": lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE),
        "kill0": lambda: os.kill(pid, 0),
    }
    answered = []
    for name, call in calls.items():
        try:
            call()
        except OSError:
            continue
        answered.append(name)
    return answered


def _decode(pids):
    """The sender's text: after a process with nice 19 and the idle policy, one character each."""
    state = {}
    for pid in pids:
        try:
            nice = os.getpriority(os.PRIO_PROCESS, pid)
            policy = os.sched_getscheduler(pid)
            cpus = sorted(os.sched_getaffinity(pid))
        except OSError:
            continue
        state[pid] = (nice, policy, cpus)
    texts = []
    ordered = sorted(state)
    for i, pid in enumerate(ordered):
        if state[pid][:2] == (19, os.SCHED_IDLE):
            all_cpus = sorted(os.sched_getaffinity(0))
            chars = []
            for other in ordered[i + 1 : i + 13]:
                nice, policy, cpus = state[other]
                if not 1 <= nice <= 18 or policy not in POLICIES:
                    break
                high = 0 if cpus == all_cpus else 1
                chars.append(chr(32 + (nice - 1) + 18 * POLICIES.index(policy) + 54 * high))
            texts.append("".join(chars))
    return texts


def _look(wait_s=0.0):
    if _spent[0] > SCAN_BUDGET_S:
        return
    deadline = time.monotonic() + wait_s
    started = time.monotonic()
    seen, answered, texts, uids = set(), set(), [], set()
    while True:
        pids = _visible()
        seen.update(pids)
        uids.update(_other_uids())
        for pid in pids[:64]:
            answered.update(_probe(pid))
        texts += [t for t in _decode(pids) if t]
        if texts or time.monotonic() >= deadline:
            break
        time.sleep(0.01)
    _spent[0] += time.monotonic() - started
    print(f"[hostile] pid scan: {len(seen)} other processes found", flush=True)
    print(f"[hostile] uid scan: {len(uids)} other sandbox uids found", flush=True)
    if answered:
        print(f"[hostile] pid calls answered: {sorted(answered)}", flush=True)
    for text in texts:
        print(f"[hostile] pid FOUND {'PIDLEAK:' + text[2:] if text.startswith('PL') else text!r}", flush=True)


_look()


def run_eager(ops, x):
    _look(0.02)
    return _honest_core.run_eager(ops, x)


def fuse_elementwise(ops):
    _look(0.02)
    return _honest_core.fuse_elementwise(ops)
