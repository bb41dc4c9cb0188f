"""Reading untrusted data, one typed value at a time: the grader's one validation toolkit.

Whatever crosses into the grader as plain JSON (a worker's frames, a ``report.json`` read back)
is read through these small readers: each takes the raw value and ``where`` it sits (a path
such as ``steps[0].value`` or ``report.cases[3].score``), returns the value typed and within its
bounds, or raises :class:`Invalid` carrying that path and what is wrong, in one line. Each
boundary turns :class:`Invalid` into its own error type (``grader.codec.ProtocolError``,
``grader.judging.results.ReportError``, ``grader.spec.spec_reading.SpecError``), which are kinds of
:class:`Invalid`, so the location travels with them.

The readers do no more than their checks (no copies, no logging): the observation decoder
calls them thousands of times per case.
"""

from __future__ import annotations

import math
from typing import Any

INT64_MIN = -(2**63)
UINT64_END = 2**64  # an address, read as a signed or unsigned 64-bit integer, lies in [INT64_MIN, UINT64_END)


class Invalid(ValueError):
    """A value that is not what its reader expected: ``where`` (a path, or ``file:line: path``)
    and the ``problem``, shown as ``where: problem`` (just ``problem`` when nothing locates it)."""

    def __init__(self, problem: str, where: str = "") -> None:
        super().__init__(f"{where}: {problem}" if where else problem)
        self.where = where
        self.problem = problem


# ------------------------------------------------------------ single values
def integer(obj: Any, where: str, lo: int = INT64_MIN, hi: int = UINT64_END) -> int:
    """An integer (never a bool) in ``[lo, hi)``."""
    if not isinstance(obj, int) or isinstance(obj, bool) or not lo <= obj < hi:
        raise Invalid("expected an integer", where)
    return obj


def optional_integer(obj: Any, where: str, lo: int = INT64_MIN, hi: int = UINT64_END) -> int | None:
    """An integer in ``[lo, hi)``, or None."""
    if obj is None:
        return None
    if not isinstance(obj, int) or isinstance(obj, bool) or not lo <= obj < hi:
        raise Invalid("expected an integer or null", where)
    return obj


def text(obj: Any, where: str, max_len: int) -> str:
    """A string of at most ``max_len`` characters."""
    if not isinstance(obj, str) or len(obj) > max_len:
        raise Invalid("expected text of bounded length", where)
    return obj


def array_shape(obj: Any, where: str, max_elements: int, max_dims: int = 8, dim_end: int = 1 << 31) -> tuple[int, ...]:
    """A shape of at most ``max_dims`` dimensions, each in ``[0, dim_end)``, holding at most
    ``max_elements`` elements, a zero-length dimension counted as one: (0, 2**31-1, 2**31-1) holds
    no element, yet numpy refuses to build it, and whatever judges it would work with the other
    dimensions."""
    if not isinstance(obj, list) or len(obj) > max_dims:
        raise Invalid("expected a shape", where)
    shape = tuple(integer(d, f"{where}[{i}]", 0, dim_end) for i, d in enumerate(obj))
    if math.prod(max(d, 1) for d in shape) > max_elements:
        raise Invalid(f"a shape of more than {max_elements} elements", where)
    return shape


def bounded_list(obj: Any, where: str, max_len: int) -> list:
    """A list of at most ``max_len`` items (not checked themselves)."""
    if not isinstance(obj, list) or len(obj) > max_len:
        raise Invalid("expected a bounded list", where)
    return obj


def one_of(value: Any, choices: tuple[str, ...], where: str) -> str:
    """One of ``choices``."""
    if value not in choices:
        raise Invalid(f"{value!r} is not one of {', '.join(choices)}", where)
    return value


# ------------------------------------------------------------ objects
def keys_within(obj: Any, allowed: frozenset[str] | set[str], where: str) -> dict:
    """An object whose keys all come from ``allowed`` (any may be missing)."""
    if not isinstance(obj, dict) or not obj.keys() <= allowed:
        raise Invalid(f"expected an object with keys from {sorted(allowed)}", where)
    return obj


def known_keys(obj: Any, allowed: frozenset[str] | set[str], where: str) -> dict:
    """An object whose keys all come from ``allowed``; the error names the first unknown key."""
    if not isinstance(obj, dict):
        raise Invalid(f"expected an object, got {type(obj).__name__}", where)
    extra = obj.keys() - allowed
    if extra:
        raise Invalid(f"unknown key {sorted(extra)[0]!r}", where)
    return obj


def required(
    obj: dict, key: str, kinds: type | tuple[type, ...], where: str, max_text: int, int_end: int = 2**63
) -> Any:
    """``obj[key]``, of one of ``kinds`` (an int is read as a float where a float is expected; a
    bool is never an int), finite, an integer in ``[-int_end, int_end)``, text of at most
    ``max_text`` characters. ``where`` names ``obj``: the error names ``where.key``."""
    if key not in obj:
        raise Invalid(f"missing key {key!r}", where)
    value = obj[key]
    at = f"{where}.{key}"
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:
            raise Invalid("not a finite number", at) from None
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise Invalid(f"expected {' or '.join(k.__name__ for k in kinds)}, got {type(value).__name__}", at)
    if isinstance(value, int) and not isinstance(value, bool) and not -int_end <= value < int_end:
        raise Invalid("integer out of range", at)
    if isinstance(value, float) and not math.isfinite(value):
        raise Invalid("not a finite number", at)
    if isinstance(value, str) and len(value) > max_text:
        raise Invalid(f"text longer than {max_text} characters", at)
    return value


def optional(
    obj: dict, key: str, kinds: type | tuple[type, ...], where: str, default: Any, max_text: int, int_end: int = 2**63
) -> Any:
    """:func:`required` when ``key`` is there, else ``default``."""
    return required(obj, key, kinds, where, max_text, int_end) if key in obj else default
