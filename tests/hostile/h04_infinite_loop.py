"""Hostile: an endless loop in one case (``fuse_elementwise([])``).

Must get: that case times out, the worker is replaced, every other case as the
honest core's, and the submission stays within its time budget."""
import _honest_core
from _honest_core import *  # noqa: F401,F403


def fuse_elementwise(ops):
    ops = list(ops)
    if not ops:
        n = 0
        while True:
            n += 1
    return _honest_core.fuse_elementwise(ops)
