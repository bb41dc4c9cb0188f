"""Hostile: an honest solution that also reaches into the structure of the process around it,
hoping the grader's state (cases, expected values, verdicts) lives there: it walks
``gc.get_objects()`` and the call stack (``sys._getframe``, ``f_back``, ``f_locals``) for
anything that looks like an expectation, and patches ``builtins`` and numpy with pass-through
wrappers (changing nothing, to stay undetected by behaviour).

Must get: exactly the honest score (judging happens in the grader's process, and flags never
change a score), and integrity flags for gc, frames, patch-builtins and patch-numpy in its
report.json (staff see it as "needs review"; test_hostile.py checks both)."""
import builtins
import gc
import sys

import numpy as np

from _honest_core import *  # noqa: F401,F403


def _looks_like_grader_state(obj):
    try:
        return isinstance(obj, dict) and ("expected" in obj or "checks" in obj or "verdict" in obj)
    except Exception:  # noqa: BLE001
        return False


def _forage():
    found = sum(1 for obj in gc.get_objects() if _looks_like_grader_state(obj))
    frame, depth = sys._getframe(), 0
    while frame is not None and depth < 64:
        found += sum(1 for value in list(frame.f_locals.values()) if _looks_like_grader_state(value))
        frame, depth = frame.f_back, depth + 1
    print(f"[hostile] forged structure: {found} candidate objects", flush=True)


_real_isinstance = builtins.isinstance
builtins.isinstance = lambda obj, kind: _real_isinstance(obj, kind)  # pass-through
_real_allclose = np.allclose
np.allclose = lambda *args, **kwargs: _real_allclose(*args, **kwargs)  # pass-through
_forage()
