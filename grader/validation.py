"""Reading untrusted data, one typed value at a time: the grader's one validation toolkit.

Every boundary where data enters the grader reads it through these checks: a worker's frames
(:mod:`grader.observations`, :mod:`grader.framing`), a ``report.json`` read back
(:mod:`grader.judging.results`) and the nodes of a spec file (:class:`grader.suite.spec_reading.NodeReader`).
Each check takes the raw value and ``where`` it sits (a path such as ``steps[0].value`` or
``report.cases[3].score``), returns the value typed and within its bounds, or raises
:class:`Invalid` carrying that path and what is wrong, in one line. Each boundary turns
:class:`Invalid` into its own error type (``grader.framing.ProtocolError``,
``grader.judging.report_reading.ReportError``, ``grader.suite.spec_reading.SpecError``), which are
kinds of :class:`Invalid`, so the location travels with them; the spec reader also puts the
``file:line`` of the YAML node in front of the path.

A check *decides*; a :class:`Wording` *words*. What counts as an integer (never a bool), a
number (finite), a list of bounded length, one of some choices, an object's keys (each given
once, none unknown, the required ones there) is decided once, here; how a refusal reads
belongs to the boundary, whose messages are part of what it promises: the wire says what it
expected and never shows what a worker sent (:data:`TERSE`), ``report.json`` names the type it
found (:data:`TYPE_NAMING`), a spec file shows its author the value, lists what is allowed and
puts a bad key's problem at the key's own path (``grader.suite.spec_reading.SpecWording``).
The checks several boundaries share take a ``wording`` (:data:`TERSE` unless told); the
wire's own readers (:func:`text`, :func:`array_shape`, :func:`keys_within`,
:func:`optional_integer`) keep their one terse message.

The checks do no more than their checks on the way through (no copies, no logging, the
diagnosis of what exactly is wrong only after the one fast test failed): the observation
decoder calls them thousands of times per case.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
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


# ------------------------------------------------------------ wordings
class Wording:
    """How one boundary words what a check refused. This base is the wire's: terse, it says what
    it expected and never shows the value it got (a worker's value may be anything, and long).

    ``what`` is the expectation as a noun phrase (``"an integer"``, ``"a list"``); ``value`` the
    refused value (for the spec reader, a list or mapping node stands for itself)."""

    def expected(self, what: str, value: Any) -> str:
        """``value`` is not ``what`` at all (a string where an integer belongs)."""
        return f"expected {what}"

    def out_of_range(self, what: str, value: Any, lo: float, hi: float) -> str:
        """``value`` is ``what`` but outside ``[lo, hi)``."""
        return self.expected(what, value)

    def length(self, what: str, value: Any, min_len: float, max_len: float) -> str:
        """``value`` is a list of fewer than ``min_len`` or more than ``max_len`` items."""
        return self.expected(what, value)

    def not_finite(self, value: float) -> str:
        return "not a finite number"

    def not_one_of(self, value: Any, choices: tuple[str, ...], what: str) -> str:
        return f"{value!r} is not one of {', '.join(choices)}"

    def key_where(self, where: str, key: str) -> str:
        """Where the problem with one key of the object at ``where`` is located."""
        return where

    def unknown_key(self, key: str, allowed: Iterable[str]) -> str:
        return f"unknown key {key!r}"

    def duplicate_key(self, key: str) -> str:
        return f"duplicate key {key!r}"

    def missing_key(self, key: str) -> str:
        return f"missing key {key!r}"


class TypeNaming(Wording):
    """``report.json``'s wording: the wire's, naming the type of what it got instead
    (``expected int, got str``); an integer beyond the report's bounds is out of range."""

    def expected(self, what: str, value: Any) -> str:
        return f"expected {what}, got {type(value).__name__}"

    def out_of_range(self, what: str, value: Any, lo: float, hi: float) -> str:
        return "integer out of range"


TERSE = Wording()
TYPE_NAMING = TypeNaming()


# ------------------------------------------------------------ single values
def of_kind(value: Any, kinds: tuple[type, ...], where: str, what: str | None, wording: Wording) -> Any:
    """A value of one of ``kinds`` (a bool counts only where ``bool`` is named, never as an
    int) and, if a float, finite. ``what`` names the expectation (None: the kinds' type names,
    ``int or float``)."""
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        what = " or ".join(k.__name__ for k in kinds) if what is None else what
        raise Invalid(wording.expected(what, value), where)
    if isinstance(value, float) and not math.isfinite(value):
        raise Invalid(wording.not_finite(value), where)
    return value


def integer(obj: Any, where: str, lo: float = INT64_MIN, hi: float = UINT64_END, wording: Wording = TERSE) -> int:
    """An integer (never a bool) in ``[lo, hi)`` (``-math.inf`` and ``math.inf`` leave a side open)."""
    if not isinstance(obj, int) or isinstance(obj, bool) or not lo <= obj < hi:
        of_kind(obj, (int,), where, "an integer", wording)  # refuses what is no integer at all
        raise Invalid(wording.out_of_range("an integer", obj, lo, hi), where)
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


def bounded_list(
    obj: Any,
    where: str,
    max_len: float,
    min_len: int = 0,
    what: str = "a bounded list",
    wording: Wording = TERSE,
) -> list:
    """A list of ``min_len`` to ``max_len`` items (not checked themselves)."""
    if not isinstance(obj, list) or not min_len <= len(obj) <= max_len:
        of_kind(obj, (list,), where, what, wording)  # refuses what is no list at all
        raise Invalid(wording.length(what, obj, min_len, max_len), where)
    return obj


def one_of(value: Any, choices: tuple[str, ...], where: str, what: str = "", wording: Wording = TERSE) -> str:
    """One of ``choices`` (``what`` names the kind of choice, for the wording)."""
    if value not in choices:
        raise Invalid(wording.not_one_of(value, choices, what), where)
    return value


# ------------------------------------------------------------ objects
def object_keys(
    keys: Iterable[str], allowed: Iterable[str], where: str, required: Iterable[str], wording: Wording
) -> set[str]:
    """An object's keys, taken in the order given: each given once and in ``allowed``, and then
    every one of ``required`` there. The first key that breaks a rule is the one named; ``keys``
    may be a generator, so that a boundary's own rules for a key (a YAML key that reads as a
    bool) come in the same order. Returns the keys."""
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            raise Invalid(wording.duplicate_key(key), wording.key_where(where, key))
        if key not in allowed:
            raise Invalid(wording.unknown_key(key, allowed), wording.key_where(where, key))
        seen.add(key)
    for key in required:
        if key not in seen:
            raise Invalid(wording.missing_key(key), where)
    return seen


def keys_within(obj: Any, allowed: frozenset[str] | set[str], where: str) -> dict:
    """An object whose keys all come from ``allowed`` (any may be missing): the wire's check,
    one set comparison and one message for whatever is wrong."""
    if not isinstance(obj, dict) or not obj.keys() <= allowed:
        raise Invalid(f"expected an object with keys from {sorted(allowed)}", where)
    return obj


def known_keys(obj: Any, allowed: frozenset[str] | set[str], where: str) -> dict:
    """An object whose keys all come from ``allowed``; the error names the first unknown key
    (in sorted order)."""
    of_kind(obj, (dict,), where, "an object", TYPE_NAMING)
    if not obj.keys() <= allowed:
        object_keys(sorted(obj), allowed, where, (), TYPE_NAMING)
    return obj


def required(
    obj: dict, key: str, kinds: type | tuple[type, ...], where: str, max_text: int, int_end: int = 2**63
) -> Any:
    """``obj[key]``, of one of ``kinds`` (an int is read as a float where a float is expected; a
    bool is never an int), finite, an integer in ``[-int_end, int_end)``, text of at most
    ``max_text`` characters. ``where`` names ``obj``: the error names ``where.key``."""
    if key not in obj:
        raise Invalid(TYPE_NAMING.missing_key(key), where)
    value = obj[key]
    # the values every valid file holds, of exactly the kind asked for, returned without making the
    # error's location (a report read back makes hundreds of thousands of these calls); anything
    # else (an int read as a float, a subclass, a value out of bounds) takes the path below
    kind = type(value)
    if kind is kinds or (kinds.__class__ is tuple and kind in kinds):
        if kind is str:
            if len(value) <= max_text:
                return value
        elif kind is float:
            if math.isfinite(value):
                return value
        elif kind is int:  # (where a float is asked for too, the int is read as one: below)
            if (kinds is int or float not in kinds) and -int_end <= value < int_end:
                return value
        elif kind is bool or kind is list or kind is dict:
            return value
    at = f"{where}.{key}"
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:
            raise Invalid(TYPE_NAMING.not_finite(value), at) from None
    of_kind(value, kinds, at, None, TYPE_NAMING)
    if isinstance(value, int) and not isinstance(value, bool):
        integer(value, at, -int_end, int_end, TYPE_NAMING)
    if isinstance(value, str) and len(value) > max_text:
        raise Invalid(f"text longer than {max_text} characters", at)
    return value


def optional(
    obj: dict, key: str, kinds: type | tuple[type, ...], where: str, default: Any, max_text: int, int_end: int = 2**63
) -> Any:
    """:func:`required` when ``key`` is there, else ``default``."""
    return required(obj, key, kinds, where, max_text, int_end) if key in obj else default
