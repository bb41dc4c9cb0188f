"""The judge's vocabulary, shared by every check kind: values in words, array comparison, step kinds.

A verdict speaks to a student, so every value it shows is short and readable
(:func:`describe`, bounded whatever a submission returns), every array comparison
says where the arrays differ (:func:`compare_arrays`), and every message names the
kind of step it is about (:func:`step_kind`: an eager run is not a replay).
"""

from __future__ import annotations

import numpy as np

from grader.lab import active as active_lab
from grader.ops import dtype_name
from grader.protocol import EnumValue, OpaqueValue, StepObservation
from grader.spec.case_draft import padded_shape
from grader.spec_model import ArrayValue, Case, MaskValue, PlainValue, Step, contract_names

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


def step_kind(case: Case, index: int) -> str:
    """What a step does, read from the trusted steps, so that every message speaks of the right
    thing (an eager run is not a replay, a warm-up call is not a capture):

    ``eager`` (run_eager), ``oversize`` (a batch above every capture size: eager, never captured),
    ``uncapturable`` (a PiecewiseGraphRunner with no capturable op: every call eager), ``warmup``,
    ``capture``, ``replay``, ``piecewise-capture``, ``piecewise-replay`` or ``other``.

    A runner call's key is its input's shape, padded to the runner's literal capture sizes; the
    first ``warmup_steps`` calls of a key warm up, the next captures, later ones replay. Where an
    input's shape is not known (a ``ref``), the first call of a runner is taken as its capture."""
    step = case.steps[index]
    if step.action == "call" and step.target == "run_eager":
        return "eager"
    if step.action != "call" or step.target in contract_names():
        return "other"
    build = runner_build(case, index)
    calls = [s for s in case.steps[: index + 1] if s.action == "call" and s.target == step.target]
    if build is None:
        return "replay" if len(calls) > 1 else "capture"
    piecewise = build.target == "PiecewiseGraphRunner"
    mask = given_arg(build, 1, "is_capturable") if piecewise else None
    if isinstance(mask, MaskValue) and not any(mask.mask):
        return "uncapturable"
    sizes = _int_tuple(given_arg(build, 2 if piecewise else 1, "capture_sizes"))
    warmup = 0 if piecewise else _int_value(given_arg(build, 2, "warmup_steps"))
    keys = [_call_key(c, sizes) for c in calls]
    prefix = "piecewise-" if piecewise else ""
    if keys[-1] == "oversize":
        return "oversize"
    if any(k is None for k in keys):
        return prefix + ("replay" if len(calls) > 1 else "capture")
    earlier = sum(1 for k in keys[:-1] if k == keys[-1])
    if earlier < warmup:
        return "warmup"
    return prefix + ("capture" if earlier == warmup else "replay")


def padded_batch(case: Case, index: int) -> int | None:
    """The batch a runner call with a literal input pads to under the runner's literal capture
    sizes; None without capture sizes, above every size, or where it cannot be told."""
    step = case.steps[index]
    build = runner_build(case, index) if step.action == "call" and step.target not in contract_names() else None
    if build is None:
        return None
    sizes = _int_tuple(given_arg(build, 2 if build.target == "PiecewiseGraphRunner" else 1, "capture_sizes"))
    key = _call_key(step, sizes) if sizes else None
    return key[0] if isinstance(key, tuple) and key else None


def runner_build(case: Case, index: int) -> Step | None:
    """The step that built the runner step ``index`` calls (the latest build of that name before it)."""
    target = case.steps[index].target
    return next(
        (s for s in reversed(case.steps[:index]) if s.action == "build" and s.name == target),
        None,
    )


def given_arg(step: Step, position: int, keyword: str) -> object:
    """The value a step passes by keyword, else at ``position``; None when not given."""
    for name, value in step.kwargs:
        if name == keyword:
            return value
    return step.args[position] if len(step.args) > position else None


def _int_tuple(value: object) -> tuple[int, ...] | None:
    if isinstance(value, PlainValue) and isinstance(value.value, tuple) and value.value:
        if all(type(v) is int for v in value.value):
            return value.value
    return None


def _int_value(value: object) -> int:
    return value.value if isinstance(value, PlainValue) and type(value.value) is int else 0


def _call_key(call: Step, sizes: tuple[int, ...] | None) -> tuple[int, ...] | str | None:
    """The graph key of a runner call with a literal input (:func:`padded_shape`; "oversize"
    above every capture size)."""
    x = given_arg(call, 0, "x")
    if not isinstance(x, ArrayValue):
        return None
    if sizes and x.shape and x.shape[0] > max(sizes):
        return "oversize"
    return padded_shape(x.shape, sizes)


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
