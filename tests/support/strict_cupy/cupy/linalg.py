"""``cupy.linalg`` of the strict stand-in: cuSOLVER / cuBLAS, refused during capture."""

import numpy as np

from cupy import _device


def _solver(name, library="cuSOLVER"):
    def func(*args, **kwargs):
        _device.library_call(library)
        import cupy

        return cupy._launch(getattr(np.linalg, name), cupy._device_arg(args), cupy._device_arg(kwargs))

    func.__name__ = name
    return func


for _name in ("svd", "inv", "solve", "cholesky", "qr", "eigh", "det", "pinv", "lstsq"):
    globals()[_name] = _solver(_name)
norm = _solver("norm", "cuBLAS")
