"""The judge's vocabulary, shared by every check kind: values and outcomes in words, array comparison.

A verdict speaks to a student, so every value it shows is short and readable
(:func:`describe`, bounded whatever a submission returns), and every array comparison
says where the arrays differ (:func:`compare_arrays`). What kind of step a message is
about is a lab's own vocabulary (the CUDA-graph lab's: its pack's ``checks/runner_steps.py``).
"""

from __future__ import annotations

import numpy as np

from grader.arrays import dtype_name
from grader.lab import active as active_lab
from grader.observations import EnumValue, OpaqueValue, StepObservation

TOLERANCE = {"float32": (1e-5, 1e-6), "float64": (1e-9, 1e-12)}
# Bounds on what a verdict says about a value: a submission chooses what it returns, and a
# report (or a grader's memory) must not grow with it.
MAX_DESCRIBED = 200  # characters per described value
MAX_ITEMS = 8  # items shown of a list or tuple
MAX_MESSAGE = 500  # characters of a case's message


def describe(value: object) -> str:
    """A short, readable rendering of an observed or expected value (at most MAX_DESCRIBED characters)."""
    return cut(_render(value), MAX_DESCRIBED)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _render(value: object) -> str:
    if isinstance(value, np.ndarray):
        dims = ", ".join(str(d) for d in value.shape)
        flat = value.ravel()
        head = ", ".join(number_text(v) for v in flat[:4].tolist())  # Python numbers: formatted faster
        more = ", …" if flat.size > 4 else ""
        return f"{dtype_name(value.dtype)}[{dims}] = [{head}{more}]"
    if isinstance(value, EnumValue):
        return f"{value.type}.{value.name}"
    if isinstance(value, OpaqueValue):
        article = "an" if value.type[:1].lower() in "aeiou" else "a"
        return f"{article} {value.type} object"
    if isinstance(value, tuple):
        items = [describe(v) for v in value[:MAX_ITEMS]] + (["…"] if len(value) > MAX_ITEMS else [])
        return "[" + ", ".join(items) + "]"
    if isinstance(value, str) and len(value) > MAX_DESCRIBED:
        return repr(value[:MAX_DESCRIBED]) + "…"
    return repr(value)


def number_text(v: object) -> str:
    return f"{float(v):.4g}" if isinstance(v, (float, np.floating)) else str(v)


def outcome(obs: StepObservation) -> str:
    if obs.outcome == "raised" and obs.error:
        return f"raised {obs.error.type}: {obs.error.message}" if obs.error.message else f"raised {obs.error.type}"
    if obs.outcome == "missing":
        return f"could not run: your {active_lab().module_file} does not define {obs.note}"
    if obs.outcome == "not_reached":
        return "not run: an earlier step did not produce what it needs"
    return "returned " + describe(obs.value) if obs.value is not None else "returned None"


def compare_arrays(expected: np.ndarray, observed: object, tolerance_dtype: str) -> str | None:
    """None when equal within tolerance, else a sentence saying where they differ."""
    if not isinstance(observed, np.ndarray):
        return f"expected an array, got {describe(observed)}"
    if observed.shape != expected.shape:
        return f"shape {list(observed.shape)} instead of {list(expected.shape)}"
    rtol, atol = TOLERANCE.get(tolerance_dtype, TOLERANCE["float32"])
    if observed.dtype.kind not in "fiub":
        return f"dtype {observed.dtype} is not numeric"
    if np.array_equal(observed, expected):  # the usual case; equal is close (a NaN is never equal: see below)
        return None
    obs = observed.astype(np.float64)
    exp = expected.astype(np.float64)
    close = np.isclose(obs, exp, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    bad = tuple(int(i) for i in np.argwhere(~close)[0])
    return f"at index {list(bad)} the value is {number_text(obs[bad])} but should be {number_text(exp[bad])} ({int((~close).sum())} of {close.size} values differ)"
