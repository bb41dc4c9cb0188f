"""``cupy.random`` of the strict stand-in: cuRAND, refused during capture."""

import numpy as np

from cupy import _device


def _curand(name):
    def func(*args, **kwargs):
        _device.library_call("cuRAND")
        import cupy

        return cupy.asarray(getattr(np.random, name)(*args, **kwargs))

    func.__name__ = name
    return func


for _name in ("random", "rand", "randn", "standard_normal", "normal", "uniform", "randint", "seed"):
    globals()[_name] = _curand(_name)
