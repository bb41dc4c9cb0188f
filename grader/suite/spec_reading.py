"""Reading a spec file's YAML nodes into plain values, with ``file:line`` errors.

Everything a part of the loader needs to turn one YAML node into one typed value:
:class:`NodeReader` (mappings with allowed and required keys, typed scalars, ids,
choices) and the value readers (plain values, ops, arrays, step arguments). Every
problem is a :class:`SpecError` already phrased as ``file:line: path: message``,
in one line, whichever part of the loader (or which check kind) found it.

The checks themselves are the grader's one validation toolkit (:mod:`grader.validation`),
the same that reads a worker's frames and ``report.json``, here worded for a spec's author
(:class:`SpecWording`). What stays here is YAML's own part: a scalar node made a value, the
rules for a mapping's keys that only YAML needs (a plain word, not a YAML bool), the rules only
specs have (ids, text that is not blank), and the ``file:line`` of the node at fault.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import numpy as np
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from grader import validation
from grader.arrays import FLOAT_DTYPES
from grader.lab import active as active_lab
from grader.lab import op_vocabulary
from grader.spec_model import ArrayValue, MaskValue, OpSpec, OpsValue, PlainValue, RefValue, Value

T = TypeVar("T")

MAX_ARRAY_ELEMENTS = 1 << 16
MAX_INT_DIGITS = 300  # a longer integer is no spec's number (and would not fit a float)


class SpecError(validation.Invalid):
    """One problem in one spec file, already phrased as ``file:line: path: message`` (its
    ``where`` is ``file:line: path`` when the loader knows them)."""


# ------------------------------------------------------------ node helpers
class SpecWording(validation.Wording):
    """How a spec file's problems read: for its author, so each shows the value it refused (a
    list or mapping by its kind), lists what is allowed, and puts a key's problem at the key's
    own path (``specs[0].colour``)."""

    def expected(self, what: str, value: Any) -> str:
        return f"expected {what}, got {node_kind(value) if isinstance(value, Node) else repr(value)}"

    def out_of_range(self, what: str, value: Any, lo: float, hi: float) -> str:
        bound = f">= {lo}" if hi == math.inf else f"< {hi}" if lo == -math.inf else f"in [{lo}, {hi})"
        return f"expected {what} {bound}, got {value}"

    def length(self, what: str, value: Any, min_len: float, max_len: float) -> str:
        if len(value) < min_len:
            return f"expected at least {min_len} item{'s' if min_len != 1 else ''}"
        return f"expected at most {max_len} item{'s' if max_len != 1 else ''}"

    def not_finite(self, value: float) -> str:
        return self.expected("a finite number", value)

    def not_one_of(self, value: Any, choices: tuple[str, ...], what: str) -> str:
        return f"unknown {what} {value!r} (expected one of: {', '.join(choices)})"

    def key_where(self, where: str, key: str) -> str:
        return f"{where}.{key}"

    def unknown_key(self, key: str, allowed: Iterable[str]) -> str:
        allowed = list(allowed)
        close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.5)
        guess = f"did you mean {close[0]!r}? " if close else ""
        return f"unknown key ({guess}expected one of: {', '.join(allowed)})"

    def duplicate_key(self, key: str) -> str:
        return "duplicate key"

    def missing_key(self, key: str) -> str:
        return f"missing required key {key!r}"


SPEC_WORDING = SpecWording()


class NodeReader:
    """Reads one spec file's nodes with the toolkit's checks (:mod:`grader.validation`, in the
    :class:`SpecWording`). What is YAML's own stays here: a scalar node made a value (with the
    safe loader's tags only), a key that must be a plain word and must not read as a bool, and
    the ``file:line`` of the node at fault in front of every problem."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._constructor = yaml.SafeLoader("")

    def fail(self, node: Node | None, where: str, message: str) -> SpecError:
        line = node.start_mark.line + 1 if node is not None else 1
        where, message = printable(where), printable(message)  # a key such as "\n" keeps the error one line
        return SpecError(message, f"{self.path}:{line}: {where}" if where else f"{self.path}:{line}")

    def checked(self, node: Node, check: Callable[..., T], *args: Any) -> T:
        """``check(*args)``, one of the toolkit's checks; what it refuses becomes a
        :class:`SpecError` at ``node``'s line."""
        try:
            return check(*args)
        except validation.Invalid as exc:
            raise self.fail(node, exc.where, exc.problem) from None

    def scalar(self, node: Node) -> Any:
        try:
            value = self._constructor.construct_object(node, deep=True)
        except yaml.YAMLError:  # a tag the safe loader refuses (!!python/..., the << merge key)
            raise self.fail(
                node, "", f"unsupported YAML tag {node.tag!r}: spec files hold plain YAML values only"
            ) from None
        except ValueError:  # an integer over Python's digit limit for int(str)
            raise self.fail(node, "", f"a number of more than {MAX_INT_DIGITS} digits") from None
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**MAX_INT_DIGITS:
            raise self.fail(node, "", f"a number of more than {MAX_INT_DIGITS} digits")
        return value

    def value(self, node: Node) -> Any:
        """What the toolkit checks for ``node``: a scalar's value; a list or mapping node itself
        (the wording names its kind)."""
        return self.scalar(node) if isinstance(node, ScalarNode) else node

    def mapping(
        self, node: Node, where: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()
    ) -> dict[str, tuple[Node, Node]]:
        self.checked(node, validation.of_kind, node, (MappingNode,), where, "a mapping", SPEC_WORDING)
        out: dict[str, tuple[Node, Node]] = {}
        at_fault = [node]  # the node a key problem is at: the key being checked, else the mapping

        def keys() -> Iterator[str]:  # YAML's own rules for each key, in turn with the toolkit's
            for key_node, value_node in node.value:
                if not isinstance(key_node, ScalarNode):
                    raise self.fail(key_node, where, "keys must be plain words")
                raw_key = self.scalar(key_node)
                if isinstance(raw_key, bool):
                    raise self.fail(
                        key_node,
                        where,
                        f"key {key_node.value!r} reads as {raw_key} in YAML; quote it, or use the documented key name",
                    )
                key = str(raw_key)
                at_fault[0] = key_node
                yield key
                out[key] = (key_node, value_node)
            at_fault[0] = node

        try:
            validation.object_keys(keys(), allowed, where, required, SPEC_WORDING)
        except SpecError:
            raise
        except validation.Invalid as exc:
            raise self.fail(at_fault[0], exc.where, exc.problem) from None
        return out

    def sequence(self, node: Node, where: str, min_len: int = 0) -> list[Node]:
        items = node.value if isinstance(node, SequenceNode) else node
        return list(
            self.checked(node, validation.bounded_list, items, where, math.inf, min_len, "a list", SPEC_WORDING)
        )

    def typed(self, node: Node, where: str, kinds: tuple[type, ...], what: str) -> Any:
        value = self.value(node)
        return self.checked(node, validation.of_kind, value, kinds, where, what, SPEC_WORDING)

    def text(self, node: Node, where: str) -> str:
        value = self.typed(node, where, (str,), "text")
        if not value.strip():
            raise self.fail(node, where, "must not be empty")
        return value.strip()

    def ident(self, node: Node, where: str) -> str:
        value = self.typed(node, where, (str,), "an id (letters, digits, - and _)")
        if not value or not all(c.isalnum() or c in "-_" for c in value):
            raise self.fail(node, where, f"expected an id of letters, digits, - and _, got {value!r}")
        return value

    def integer(self, node: Node, where: str, minimum: int | None = None) -> int:
        lo = -math.inf if minimum is None else minimum
        return self.checked(node, validation.integer, self.value(node), where, lo, math.inf, SPEC_WORDING)

    def number(self, node: Node, where: str) -> float | int:
        return self.typed(node, where, (int, float), "a number")

    def choice(self, node: Node, where: str, choices: tuple[str, ...], what: str) -> str:
        value = self.typed(node, where, (str,), what)
        return self.checked(node, validation.one_of, value, choices, where, what, SPEC_WORDING)


def printable(text: str) -> str:
    """``text`` with each unprintable character (newline, tab, NUL, ...) written as its escape."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def node_kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return f"{node.value!r}" if node.value != "" else "nothing"


def node_line(node: Node) -> int:
    return node.start_mark.line + 1


def refuse_tags(ctx: NodeReader, root: Node) -> None:
    """A list or mapping with a tag (``!!set``, ``!!python/...``) is not plain YAML; scalars are checked as read."""
    plain = {SequenceNode: "tag:yaml.org,2002:seq", MappingNode: "tag:yaml.org,2002:map"}
    seen: set[int] = set()
    todo = [root]
    while todo:  # iterative, and each aliased node once
        node = todo.pop()
        if id(node) in seen or isinstance(node, ScalarNode):
            continue
        seen.add(id(node))
        if node.tag != plain[type(node)]:
            raise ctx.fail(node, "", f"unsupported YAML tag {node.tag!r}: spec files hold plain YAML values only")
        todo.extend(reversed([n for pair in node.value for n in pair] if isinstance(node, MappingNode) else node.value))


# ------------------------------------------------------------ values
_PLAIN_KINDS = (bool, int, float, str, type(None))  # not a date, a timestamp or bytes (!!binary)
_PLAIN = "a number, text, true/false or null"


def read_plain(ctx: NodeReader, node: Node, where: str) -> object:
    if isinstance(node, ScalarNode):
        return ctx.checked(node, validation.of_kind, ctx.scalar(node), _PLAIN_KINDS, where, _PLAIN, SPEC_WORDING)
    if isinstance(node, SequenceNode):
        return tuple(read_plain(ctx, item, f"{where}[{i}]") for i, item in enumerate(node.value))
    raise ctx.fail(node, where, "expected a plain value, or a mapping with one of: array, ops, capturable, ref")


def read_op(ctx: NodeReader, node: Node, where: str) -> OpSpec:
    """An op of the lab's vocabulary (grader.lab.vocabulary): its name, and its number or seed."""
    vocabulary = op_vocabulary()
    kinds = vocabulary.kinds if vocabulary is not None else {}
    if isinstance(node, ScalarNode):
        name = ctx.choice(node, where, tuple(kinds), "op")
        if kinds[name].takes is not None:
            raise ctx.fail(node, where, f"op {name!r} needs a {kinds[name].takes}: write {{{name}: ...}}")
        return OpSpec(name)
    if isinstance(node, MappingNode) and len(node.value) == 1:
        key_node, value_node = node.value[0]
        name = ctx.choice(key_node, where, tuple(kinds), "op")
        takes = kinds[name].takes
        if takes is None:
            raise ctx.fail(key_node, f"{where}.{name}", f"op {name!r} takes no argument: write just {name}")
        if takes == "seed":
            return OpSpec(name, ctx.integer(value_node, f"{where}.{name}", minimum=0))
        return OpSpec(name, ctx.number(value_node, f"{where}.{name}"))
    raise ctx.fail(node, where, "expected an op: a name such as relu, or a mapping such as {add: 1.5}")


def read_array(ctx: NodeReader, node: Node, where: str) -> ArrayValue:
    fields = ctx.mapping(node, where, ("shape", "dtype", "seed", "values"))
    dtype = ctx.choice(fields["dtype"][1], f"{where}.dtype", FLOAT_DTYPES, "dtype") if "dtype" in fields else "float32"
    if "values" in fields:
        if "shape" in fields or "seed" in fields:
            raise ctx.fail(node, where, "give either values, or shape (and seed), not both")
        values = read_plain(ctx, fields["values"][1], f"{where}.values")
        try:
            if not _all_numbers(values):
                raise TypeError
            with np.errstate(over="ignore"):
                arr = np.asarray(values, dtype=dtype)
            if arr.ndim == 0 or arr.size == 0 or not np.isfinite(arr).all():
                raise ValueError
        except (TypeError, ValueError):
            raise ctx.fail(
                fields["values"][1],
                f"{where}.values",
                f"expected a non-empty (nested) list of finite {dtype} numbers of one rectangular shape",
            ) from None
        if arr.size > MAX_ARRAY_ELEMENTS:
            raise ctx.fail(fields["values"][1], f"{where}.values", f"at most {MAX_ARRAY_ELEMENTS} elements per input")
        return ArrayValue(dtype=dtype, shape=tuple(arr.shape), values=_nested_tuple(arr.tolist()))
    if "shape" not in fields:
        raise ctx.fail(node, where, "missing required key 'shape' (or give 'values')")
    shape_node = fields["shape"][1]
    shape = tuple(
        ctx.integer(d, f"{where}.shape[{i}]", minimum=1)
        for i, d in enumerate(ctx.sequence(shape_node, f"{where}.shape", 1))
    )
    if math.prod(shape) > MAX_ARRAY_ELEMENTS:
        raise ctx.fail(shape_node, f"{where}.shape", f"at most {MAX_ARRAY_ELEMENTS} elements per input")
    seed = ctx.integer(fields["seed"][1], f"{where}.seed", minimum=0) if "seed" in fields else 0
    return ArrayValue(dtype=dtype, shape=shape, seed=seed)


def _all_numbers(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_all_numbers(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _nested_tuple(value: Any) -> Any:
    return tuple(_nested_tuple(v) for v in value) if isinstance(value, list) else value


def read_value(ctx: NodeReader, node: Node, where: str, names: set[str]) -> Value:
    if isinstance(node, MappingNode):
        if len(node.value) != 1:
            kinds = [k for k in active_lab().values if k != "plain"]
            listed = ", ".join(kinds[:-1]) + " or " + kinds[-1] if len(kinds) > 1 else kinds[0]
            raise ctx.fail(node, where, f"a value mapping has exactly one key: {listed}")
        key_node, inner = node.value[0]
        kinds = tuple(k for k in active_lab().values if k != "plain")  # the lab's value kinds
        key = ctx.choice(key_node, where, kinds, "value kind")
        if key == "array":
            return read_array(ctx, inner, f"{where}.array")
        if key == "ops":
            return OpsValue(
                tuple(read_op(ctx, op, f"{where}.ops[{i}]") for i, op in enumerate(ctx.sequence(inner, f"{where}.ops")))
            )
        if key == "capturable":
            mask = tuple(
                ctx.typed(m, f"{where}.capturable[{i}]", (bool,), "true or false")
                for i, m in enumerate(ctx.sequence(inner, f"{where}.capturable", 1))
            )
            return MaskValue(mask)
        name = ctx.ident(inner, f"{where}.ref")
        if name not in names:
            raise ctx.fail(inner, f"{where}.ref", f"no earlier step is named {name!r}")
        return RefValue(name)
    return PlainValue(read_plain(ctx, node, where))
