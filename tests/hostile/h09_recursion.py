"""Hostile: infinite recursion in every fusion case: plain Python recursion (RecursionError),
and, for an empty op list, recursion through C (``__getattr__`` calling ``getattr``) with the
recursion limit lifted, which overflows the C stack: a crash, not an exception.

Must get: fusion cases fail or crash, every other case as the honest core's."""
import sys

from _honest_core import *  # noqa: F401,F403


def _down(n):
    return _down(n + 1) + 1


class _Bottomless:
    def __getattr__(self, name):
        return getattr(self, name)


def fuse_elementwise(ops):
    if not list(ops):
        sys.setrecursionlimit(10**8)
        return _Bottomless().anything
    return _down(0)
