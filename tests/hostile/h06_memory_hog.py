"""Hostile: tries to allocate 20 GB, at import (swallowing the failure) and in every fusion case.

Must get: the allocation fails (address-space limit) instead of taking the machine's
memory; fusion cases fail, every other case as the honest core's."""
import numpy as np

from _honest_core import *  # noqa: F401,F403

try:
    _hoard = bytearray(20 << 30)
except MemoryError:
    _hoard = None


def fuse_elementwise(ops):
    hog = np.ones(20 * 10**9 // 8, dtype=np.float64)  # 20 GB, touched
    hog2 = bytearray(20 << 30)
    return [hog, hog2]
