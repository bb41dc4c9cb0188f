"""Hostile: goes after the other submissions of the batch: reads and overwrites their
copies in the grader's scratch area and any cudagraph.py it can find under /tmp, writes
into their output logs, and signals every process of the other sandbox uids.

Must get: every other submission's report unchanged (the honest one's is compared
with its report graded alone); it earns its own points honestly."""
import glob
import os
import signal

import _honest_core
import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403

EVIL = "raise SystemExit('sabotaged by a hostile submission')\n"


def _sabotage():
    for path in glob.glob("/tmp/graphgrade-*/slot*/submission/*.py") + glob.glob("/tmp/*/honest/cudagraph.py") + glob.glob("/tmp/pytest-of-*/pytest-*/*/*/honest/cudagraph.py"):
        ok, text = kit.attempt(f"read {path}", lambda p=path: open(p).read(200))
        if ok:
            print(text)
        kit.attempt(f"overwrite {path}", lambda p=path: open(p, "w").write(EVIL))
    for log in glob.glob("/tmp/graphgrade-*/slot*.log"):
        kit.attempt(f"write into {log}", lambda p=log: open(p, "a").write(kit.MARKER))
    for pid, _ in kit.processes():
        try:
            uid = os.stat(f"/proc/{pid}").st_uid
        except OSError:
            continue
        if 61000 <= uid < 62000 and uid != os.getuid():
            kit.attempt(f"kill pid {pid} of uid {uid}", os.kill, pid, signal.SIGKILL)


_sabotage()


def fuse_elementwise(ops):
    _sabotage()
    return _honest_core.fuse_elementwise(ops)
