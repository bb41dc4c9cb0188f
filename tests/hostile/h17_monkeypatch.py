"""Hostile: a buggy solution that monkeypatches numpy's comparisons (allclose, array_equal,
isclose, testing.*) to always agree, and builtins.isinstance to say yes to ndarray,
hoping the checks run in its process.

Must get: no more than the same buggy solution without the patches (the "buggy"
baseline): judging happens in the grader's process, on rebuilt plain arrays."""
import builtins

import numpy as np

import _honest_core

_honest_core.BUGGY = True
from _honest_core import *  # noqa: F401,F403,E402

_real_isinstance = builtins.isinstance


def _yes(*args, **kwargs):
    return True


def _lying_isinstance(obj, classinfo):
    if classinfo is np.ndarray or (type(classinfo) is tuple and np.ndarray in classinfo):
        return True
    return _real_isinstance(obj, classinfo)


for _name in ("allclose", "array_equal", "array_equiv", "isclose"):
    setattr(np, _name, _yes)
for _name in ("assert_allclose", "assert_array_equal", "assert_equal", "assert_array_almost_equal"):
    setattr(np.testing, _name, lambda *a, **k: None)
builtins.isinstance = _lying_isinstance
