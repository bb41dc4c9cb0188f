"""Reference solution for the CUDA-graph lab (numpy simulation).

The CuPy backend lives in ``reference.cuda`` and is imported only on demand.
"""

from reference.cudagraph import (
    GraphEntry,
    GraphRunner,
    InferenceGraphCapture,
    LaunchCounter,
    PiecewiseGraphRunner,
    StepMode,
    fuse_elementwise,
    run_eager,
)

__all__ = [
    "CONTRACT_NAMES",
    "GraphEntry",
    "GraphRunner",
    "InferenceGraphCapture",
    "LaunchCounter",
    "PiecewiseGraphRunner",
    "StepMode",
    "fuse_elementwise",
    "run_eager",
]

CONTRACT_NAMES: tuple[str, ...] = (
    "LaunchCounter",
    "run_eager",
    "GraphEntry",
    "GraphRunner",
    "PiecewiseGraphRunner",
    "fuse_elementwise",
    "StepMode",
    "InferenceGraphCapture",
)

__all__ = [*CONTRACT_NAMES, "CONTRACT_NAMES"]
