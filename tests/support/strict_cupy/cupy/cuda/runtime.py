"""``cupy.cuda.runtime`` of the strict stand-in: one CPU "device"."""

from cupy._device import CUDARuntimeError, Device, _captures, get_current_stream  # noqa: F401

is_hip = False
_is_hip_environment = False
streamCaptureModeGlobal, streamCaptureModeThreadLocal, streamCaptureModeRelaxed = 0, 1, 2


def getDeviceCount() -> int:
    return 1


def getDevice() -> int:
    return 0


def getDeviceProperties(device: int) -> dict:
    return {"name": b"strict CuPy stand-in (CPU)", "major": 9, "minor": 0}


def runtimeGetVersion() -> int:
    return 12080


def driverGetVersion() -> int:
    return 12080


def deviceSynchronize() -> None:
    Device().synchronize()


def streamIsCapturing(stream_ptr: int) -> bool:
    return any(c.stream.ptr == stream_ptr for c in _captures)
