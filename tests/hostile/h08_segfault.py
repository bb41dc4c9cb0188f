"""Hostile: a segmentation fault (reading address 1) in every fusion case.

Must get: fusion cases crashed (SIGSEGV), every other case as the honest core's."""
import ctypes

from _honest_core import *  # noqa: F401,F403


def fuse_elementwise(ops):
    return ctypes.string_at(1, 64)  # (address 0 would make ctypes return an empty buffer)
