"""Hostile: a buggy solution whose every returned array is an ndarray subclass that lies:
``__eq__``/``__ne__`` always "equal", ``__array_function__`` and ``__array_ufunc__`` answer
True to everything (np.allclose, np.array_equal, ==), ``__bool__`` True, ``tolist`` and
``__array__`` hand back the data, ``shape``/``dtype`` overridden in Python.

Must get: no more than the buggy baseline: the grader rebuilds every value as a plain
array of the declared dtype and shape from raw bytes, and compares those."""
import numpy as np

import _honest_core

_honest_core.BUGGY = True
from _honest_core import *  # noqa: F401,F403,E402


class Liar(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(self), dtype=bool).view(Liar)

    def __ne__(self, other):
        return np.zeros(np.shape(self), dtype=bool)

    def __bool__(self):
        return True

    def __array_function__(self, func, types, args, kwargs):
        return True

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return True

    def __hash__(self):
        return 0


def _lie(value):
    if type(value) is np.ndarray:
        return value.view(Liar)
    return value


class GraphRunner(_honest_core.GraphRunner):
    def __call__(self, x):
        return _lie(super().__call__(x))


class PiecewiseGraphRunner(_honest_core.PiecewiseGraphRunner):
    def __call__(self, x):
        return _lie(super().__call__(x))


def run_eager(ops, x):
    return _lie(_honest_core.run_eager(ops, x))
