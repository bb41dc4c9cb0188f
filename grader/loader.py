"""Load spec files: YAML (safe) -> validated, frozen :mod:`grader.spec_model` objects.

Strict by design: unknown keys, duplicate keys, duplicate ids, unknown tags,
ops, steps or checks are errors, and every error names ``file:line``, the
path of the bad key and what was expected, in one line. The loader also does
the static work a judge needs: which op chain a call runs (for the oracle),
which buffer shape a padded input lands in, and the implicit reads a check
such as ``num_captured`` needs the worker to make.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from grader.ops import FLOAT_DTYPES, OP_KINDS, OpSpec
from grader.spec_model import (
    CHECK_KINDS,
    CONTRACT_FUNCTIONS,
    SPEC_FORMAT,
    STEP_ACTIONS,
    TAGS,
    VISIBILITIES,
    ArrayValue,
    Case,
    Check,
    LaunchesCheck,
    MaskValue,
    OpsValue,
    OutputCheck,
    PlainValue,
    RaisesCheck,
    RefValue,
    Spec,
    SpecFile,
    StaticBufferCheck,
    Step,
    Suite,
    Value,
    ValueCheck,
    WitnessCheck,
    PaddedRowsCheck,
    FusedOpsCheck,
)

MAX_SPEC_FILE_BYTES = 2 * 1024 * 1024
MAX_ARRAY_ELEMENTS = 1 << 16
MAX_INT_DIGITS = 300  # a longer integer is no spec's number (and would not fit a float)
RUNNER_CLASSES = ("GraphRunner", "PiecewiseGraphRunner")
BUILDABLE = RUNNER_CLASSES + ("InferenceGraphCapture",)
STEP_MODES = ("WARMUP", "CAPTURE", "REPLAY")
EXCEPTION_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


class SpecError(ValueError):
    """One problem in one spec file, already phrased as ``file:line: path: message``."""


class SpecErrors(ValueError):
    """Every problem found while loading a directory of spec files."""

    def __init__(self, errors: list[SpecError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors


# ------------------------------------------------------------ node helpers
class _Ctx:
    def __init__(self, path: str) -> None:
        self.path = path
        self._constructor = yaml.SafeLoader("")

    def fail(self, node: Node | None, where: str, message: str) -> SpecError:
        line = node.start_mark.line + 1 if node is not None else 1
        where, message = _printable(where), _printable(message)  # a key such as "\n" keeps the error one line
        return SpecError(f"{self.path}:{line}: {where}: {message}" if where else f"{self.path}:{line}: {message}")

    def scalar(self, node: Node) -> Any:
        try:
            value = self._constructor.construct_object(node, deep=True)
        except yaml.YAMLError:  # a tag the safe loader refuses (!!python/..., the << merge key)
            raise self.fail(node, "", f"unsupported YAML tag {node.tag!r}: spec files hold plain YAML values only") from None
        except ValueError:  # an integer over Python's digit limit for int(str)
            raise self.fail(node, "", f"a number of more than {MAX_INT_DIGITS} digits") from None
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**MAX_INT_DIGITS:
            raise self.fail(node, "", f"a number of more than {MAX_INT_DIGITS} digits")
        return value

    def mapping(self, node: Node, where: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict[str, tuple[Node, Node]]:
        if not isinstance(node, MappingNode):
            raise self.fail(node, where, f"expected a mapping, got {_kind(node)}")
        out: dict[str, tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise self.fail(key_node, where, "keys must be plain words")
            raw_key = self.scalar(key_node)
            if isinstance(raw_key, bool):
                raise self.fail(key_node, where, f"key {key_node.value!r} reads as {raw_key} in YAML; quote it, or use the documented key name")
            key = str(raw_key)
            if key in out:
                raise self.fail(key_node, f"{where}.{key}", "duplicate key")
            if key not in allowed:
                raise self.fail(key_node, f"{where}.{key}", f"unknown key (expected one of: {', '.join(allowed)})")
            out[key] = (key_node, value_node)
        for key in required:
            if key not in out:
                raise self.fail(node, where, f"missing required key {key!r}")
        return out

    def sequence(self, node: Node, where: str, min_len: int = 0) -> list[Node]:
        if not isinstance(node, SequenceNode):
            raise self.fail(node, where, f"expected a list, got {_kind(node)}")
        if len(node.value) < min_len:
            raise self.fail(node, where, f"expected at least {min_len} item{'s' if min_len != 1 else ''}")
        return list(node.value)

    def typed(self, node: Node, where: str, kinds: tuple[type, ...], what: str) -> Any:
        if not isinstance(node, ScalarNode):
            raise self.fail(node, where, f"expected {what}, got {_kind(node)}")
        value = self.scalar(node)
        if isinstance(value, bool) and bool not in kinds:
            raise self.fail(node, where, f"expected {what}, got {value!r}")
        if not isinstance(value, kinds):
            raise self.fail(node, where, f"expected {what}, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(node, where, f"expected a finite number, got {value!r}")
        return value

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
        value = self.typed(node, where, (int,), "an integer")
        if minimum is not None and value < minimum:
            raise self.fail(node, where, f"expected an integer >= {minimum}, got {value}")
        return value

    def number(self, node: Node, where: str) -> float | int:
        return self.typed(node, where, (int, float), "a number")

    def choice(self, node: Node, where: str, choices: tuple[str, ...], what: str) -> str:
        value = self.typed(node, where, (str,), what)
        if value not in choices:
            raise self.fail(node, where, f"unknown {what} {value!r} (expected one of: {', '.join(choices)})")
        return value


def _printable(text: str) -> str:
    """``text`` with each unprintable character (newline, tab, NUL, ...) written as its escape."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return f"{node.value!r}" if node.value != "" else "nothing"


def _line(node: Node) -> int:
    return node.start_mark.line + 1


def _refuse_tags(ctx: _Ctx, root: Node) -> None:
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
def _plain(ctx: _Ctx, node: Node, where: str) -> object:
    if isinstance(node, ScalarNode):
        value = ctx.scalar(node)
        if isinstance(value, float) and not math.isfinite(value):
            raise ctx.fail(node, where, f"expected a finite number, got {value!r}")
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise ctx.fail(node, where, f"expected a number, text, true/false or null, got {value!r}")
        return value
    if isinstance(node, SequenceNode):
        return tuple(_plain(ctx, item, f"{where}[{i}]") for i, item in enumerate(node.value))
    raise ctx.fail(node, where, "expected a plain value, or a mapping with one of: array, ops, capturable, ref")


def _op(ctx: _Ctx, node: Node, where: str) -> OpSpec:
    if isinstance(node, ScalarNode):
        name = ctx.choice(node, where, tuple(OP_KINDS), "op")
        if OP_KINDS[name].takes is not None:
            raise ctx.fail(node, where, f"op {name!r} needs a {OP_KINDS[name].takes}: write {{{name}: ...}}")
        return OpSpec(name)
    if isinstance(node, MappingNode) and len(node.value) == 1:
        key_node, value_node = node.value[0]
        name = ctx.choice(key_node, where, tuple(OP_KINDS), "op")
        takes = OP_KINDS[name].takes
        if takes is None:
            raise ctx.fail(key_node, f"{where}.{name}", f"op {name!r} takes no argument: write just {name}")
        if takes == "seed":
            return OpSpec(name, ctx.integer(value_node, f"{where}.{name}", minimum=0))
        return OpSpec(name, ctx.number(value_node, f"{where}.{name}"))
    raise ctx.fail(node, where, "expected an op: a name such as relu, or a mapping such as {add: 1.5}")


def _array(ctx: _Ctx, node: Node, where: str) -> ArrayValue:
    fields = ctx.mapping(node, where, ("shape", "dtype", "seed", "values"))
    dtype = ctx.choice(fields["dtype"][1], f"{where}.dtype", FLOAT_DTYPES, "dtype") if "dtype" in fields else "float32"
    if "values" in fields:
        if "shape" in fields or "seed" in fields:
            raise ctx.fail(node, where, "give either values, or shape (and seed), not both")
        values = _plain(ctx, fields["values"][1], f"{where}.values")
        try:
            if not _all_numbers(values):
                raise TypeError
            with np.errstate(over="ignore"):
                arr = np.asarray(values, dtype=dtype)
            if arr.ndim == 0 or arr.size == 0 or not np.isfinite(arr).all():
                raise ValueError
        except (TypeError, ValueError):
            raise ctx.fail(fields["values"][1], f"{where}.values", f"expected a non-empty (nested) list of finite {dtype} numbers of one rectangular shape") from None
        if arr.size > MAX_ARRAY_ELEMENTS:
            raise ctx.fail(fields["values"][1], f"{where}.values", f"at most {MAX_ARRAY_ELEMENTS} elements per input")
        return ArrayValue(dtype=dtype, shape=tuple(arr.shape), values=_nested_tuple(arr.tolist()))
    if "shape" not in fields:
        raise ctx.fail(node, where, "missing required key 'shape' (or give 'values')")
    shape_node = fields["shape"][1]
    shape = tuple(ctx.integer(d, f"{where}.shape[{i}]", minimum=1) for i, d in enumerate(ctx.sequence(shape_node, f"{where}.shape", 1)))
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


def _value(ctx: _Ctx, node: Node, where: str, names: set[str]) -> Value:
    if isinstance(node, MappingNode):
        if len(node.value) != 1:
            raise ctx.fail(node, where, "a value mapping has exactly one key: array, ops, capturable or ref")
        key_node, inner = node.value[0]
        key = ctx.choice(key_node, where, ("array", "ops", "capturable", "ref"), "value kind")
        if key == "array":
            return _array(ctx, inner, f"{where}.array")
        if key == "ops":
            return OpsValue(tuple(_op(ctx, op, f"{where}.ops[{i}]") for i, op in enumerate(ctx.sequence(inner, f"{where}.ops"))))
        if key == "capturable":
            mask = tuple(ctx.typed(m, f"{where}.capturable[{i}]", (bool,), "true or false") for i, m in enumerate(ctx.sequence(inner, f"{where}.capturable", 1)))
            return MaskValue(mask)
        name = ctx.ident(inner, f"{where}.ref")
        if name not in names:
            raise ctx.fail(inner, f"{where}.ref", f"no earlier step is named {name!r}")
        return RefValue(name)
    return PlainValue(_plain(ctx, node, where))


# ------------------------------------------------------------ cases
@dataclass
class _Bound:
    """What the loader knows statically about a name bound by a step."""

    kind: str  # "runner", "machine", "ops", "result"
    chain: tuple[OpSpec, ...] | None = None
    list_id: int | None = None
    capture_sizes: tuple[int, ...] | None = None
    input: Value | None = None
    cls: str | None = None


@dataclass
class _CaseBuilder:
    ctx: _Ctx
    bound: dict[str, _Bound] = field(default_factory=dict)
    next_list_id: int = 0

    def chain_of(self, value: Value | None) -> tuple[tuple[OpSpec, ...], int] | None:
        if isinstance(value, OpsValue):
            return value.chain, self._list_ids[id(value)]
        if isinstance(value, RefValue):
            b = self.bound.get(value.name)
            if b is not None and b.chain is not None and b.list_id is not None:
                return b.chain, b.list_id
        return None

    def number_lists(self, values: list[Value]) -> None:
        for v in values:
            if isinstance(v, OpsValue):
                self._list_ids[id(v)] = self.next_list_id
                self.next_list_id += 1

    def __post_init__(self) -> None:
        self._list_ids: dict[int, int] = {}


def _literal_op_count(build_step: dict) -> int | None:
    """How many ops a runner holds, when it was built from a literal op list (a fused list's
    length is the submission's business)."""
    ops = _arg(build_step, 0, "ops")
    return len(ops.chain) if isinstance(ops, OpsValue) else None


def _arg(step: dict, position: int, keyword: str) -> Value | None:
    if keyword in step["kwargs"]:
        return step["kwargs"][keyword]
    return step["args"][position] if len(step["args"]) > position else None


def _parse_step(b: _CaseBuilder, node: Node, where: str, position: int) -> dict:
    ctx = b.ctx
    fields = ctx.mapping(node, where, STEP_ACTIONS + ("as", "of", "args", "kwargs", "value", "fill"))
    actions = [a for a in STEP_ACTIONS if a in fields]
    if len(actions) != 1:
        raise ctx.fail(node, where, f"a step has exactly one action key: {', '.join(STEP_ACTIONS)}")
    action = actions[0]
    target_node = fields[action][1]
    names = set(b.bound)
    step: dict = {"action": action, "line": _line(node), "args": [], "kwargs": {}, "on": None, "name": None, "position": position}
    if "as" in fields:
        name = ctx.ident(fields["as"][1], f"{where}.as")
        if name in b.bound:
            raise ctx.fail(fields["as"][1], f"{where}.as", f"the name {name!r} is already bound by an earlier step")
        step["name"] = name
    if "args" in fields:
        step["args"] = [_value(ctx, a, f"{where}.args[{i}]", names) for i, a in enumerate(ctx.sequence(fields["args"][1], f"{where}.args"))]
    if "kwargs" in fields:
        kw = ctx.mapping(fields["kwargs"][1], f"{where}.kwargs", tuple(_KWARG_NAMES))
        step["kwargs"] = {k: _value(ctx, v, f"{where}.kwargs.{k}", names) for k, (_, v) in kw.items()}
    b.number_lists(step["args"] + list(step["kwargs"].values()))

    def need_on(choices: tuple[str, ...] = ()) -> str:
        if "of" not in fields:
            raise ctx.fail(node, where, f"a {action} step needs 'of': the object it acts on")
        on = ctx.ident(fields["of"][1], f"{where}.of")
        if on not in b.bound and on not in choices:
            raise ctx.fail(fields["of"][1], f"{where}.of", f"no earlier step is named {on!r}")
        return on

    def forbid(*keys: str) -> None:
        for key in keys:
            if key in fields:
                raise ctx.fail(fields[key][0], f"{where}.{key}", f"not allowed in a {action} step")

    if action == "build":
        forbid("of", "value", "fill")
        step["target"] = ctx.choice(target_node, f"{where}.build", BUILDABLE, "buildable class")
        if step["name"] is None:
            raise ctx.fail(node, where, "a build step needs 'as': the name later steps use")
    elif action == "call":
        forbid("of", "value", "fill")
        target = ctx.ident(target_node, f"{where}.call")
        if target not in CONTRACT_FUNCTIONS and target not in b.bound:
            raise ctx.fail(target_node, f"{where}.call", f"expected {' or '.join(CONTRACT_FUNCTIONS)} or an earlier step's name, got {target!r}")
        step["target"] = target
    elif action == "method":
        forbid("value", "fill")
        step["target"] = ctx.ident(target_node, f"{where}.method")
        step["on"] = need_on(("LaunchCounter",))
    elif action == "read":
        forbid("args", "kwargs", "value", "fill")
        step["target"] = ctx.ident(target_node, f"{where}.read")
        step["on"] = need_on(("LaunchCounter",))
    elif action == "set":
        forbid("args", "kwargs", "fill")
        step["target"] = ctx.ident(target_node, f"{where}.set")
        step["on"] = need_on()
        if "value" not in fields:
            raise ctx.fail(node, where, "a set step needs 'value'")
        step["args"] = [_value(ctx, fields["value"][1], f"{where}.value", names)]
    else:  # mutate
        forbid("of", "args", "kwargs", "value", "as")
        target = ctx.ident(target_node, f"{where}.mutate")
        if target not in b.bound or b.bound[target].kind != "result":
            raise ctx.fail(target_node, f"{where}.mutate", f"expected the name of an earlier call's result, got {target!r}")
        step["target"] = target
        if "fill" not in fields:
            raise ctx.fail(node, where, "a mutate step needs 'fill': the number written over the array")
        step["args"] = [PlainValue(ctx.number(fields["fill"][1], f"{where}.fill"))]
    if action != "set":
        forbid("value")
    if action != "mutate":
        forbid("fill")
    _bind(b, step)
    return step


_KWARG_NAMES = ("ops", "x", "capture_sizes", "warmup_steps", "is_capturable", "enabled", "k", "graph_id", "batch_size", "seq_step")


def _bind(b: _CaseBuilder, step: dict) -> None:
    name = step["name"]
    if name is None:
        return
    action, target = step["action"], step["target"]
    if action == "build" and target in RUNNER_CLASSES:
        chain = b.chain_of(_arg(step, 0, "ops"))
        sizes_value = _arg(step, 1 if target == "GraphRunner" else 2, "capture_sizes")
        sizes = None
        if isinstance(sizes_value, PlainValue) and isinstance(sizes_value.value, tuple) and all(type(s) is int for s in sizes_value.value):
            sizes = sizes_value.value
        b.bound[name] = _Bound("runner", chain[0] if chain else None, chain[1] if chain else None, sizes, cls=target)
    elif action == "build":
        b.bound[name] = _Bound("machine")
    elif action == "call" and target == "fuse_elementwise":
        chain = b.chain_of(_arg(step, 0, "ops"))
        b.bound[name] = _Bound("ops", chain[0] if chain else None, chain[1] if chain else None)
    elif action == "call" and target == "run_eager":
        chain = b.chain_of(_arg(step, 0, "ops"))
        b.bound[name] = _Bound("result", chain[0] if chain else None, chain[1] if chain else None, input=_known_input(b, _arg(step, 1, "x")))
    elif action == "call" and b.bound.get(target) and b.bound[target].kind == "runner":
        runner = b.bound[target]
        b.bound[name] = _Bound("result", runner.chain, runner.list_id, runner.capture_sizes, input=_known_input(b, _arg(step, 0, "x")))
    else:
        b.bound[name] = _Bound("result")


def _known_input(b: _CaseBuilder, value: Value | None) -> Value | None:
    """An input the judge can rebuild: a literal array, or the result of an earlier oracle call."""
    if isinstance(value, ArrayValue):
        return value
    if isinstance(value, RefValue):
        source = b.bound.get(value.name)
        if source is not None and source.kind == "result" and source.chain is not None and source.input is not None:
            return value
    return None


def _padded_shape(shape: tuple[int, ...], sizes: tuple[int, ...] | None) -> tuple[int, ...]:
    if not sizes or not shape:
        return shape
    fitting = [s for s in sorted(sizes) if s >= shape[0]]
    return (fitting[0],) + shape[1:] if fitting else shape


@dataclass(frozen=True)
class OracleCall:
    """A call whose output the judge can compute: the op chain applied to an input."""

    step: int
    chain: tuple
    input: Value


def _parse_case(ctx: _Ctx, node: Node, where: str, spec_id: str) -> tuple[Case, tuple[OracleCall, ...]]:
    fields = ctx.mapping(node, where, ("id", "description", "steps", "checks"), ("id", "description", "steps", "checks"))
    case_id = ctx.ident(fields["id"][1], f"{where}.id")
    description = ctx.text(fields["description"][1], f"{where}.description")
    b = _CaseBuilder(ctx)
    raw_steps = [_parse_step(b, s, f"{where}.steps[{i}]", i) for i, s in enumerate(ctx.sequence(fields["steps"][1], f"{where}.steps", 1))]
    by_name = {s["name"]: s for s in raw_steps if s["name"]}

    implicit_after: dict[int | None, list[dict]] = {}
    pending: list[Callable[[dict[int, int]], Check]] = []  # each check, made once the steps have their final indices

    def step_ref(value_node: Node, at: str, kinds: tuple[str, ...] | None = None) -> dict:
        name = ctx.ident(value_node, at)
        if name not in by_name:
            raise ctx.fail(value_node, at, f"no step is named {name!r}")
        step = by_name[name]
        if kinds and step["action"] not in kinds:
            raise ctx.fail(value_node, at, f"step {name!r} is a {step['action']} step; this check needs a {' or '.join(kinds)} step")
        return step

    def implicit(after_node: Node | None, at: str, step: dict) -> dict:
        anchor = step_ref(after_node, f"{at}.after")["position"] if after_node is not None else None
        step.update(line=_line(after_node) if after_node is not None else 0, args=[], kwargs={}, name=None, position=None, implicit=True)
        implicit_after.setdefault(anchor, []).append(step)
        return step

    for i, check_node in enumerate(ctx.sequence(fields["checks"][1], f"{where}.checks", 1)):
        at = f"{where}.checks[{i}]"
        if not isinstance(check_node, MappingNode) or len(check_node.value) != 1:
            raise ctx.fail(check_node, at, f"a check is a mapping with one key: {', '.join(CHECK_KINDS)}")
        kind = ctx.choice(check_node.value[0][0], at, CHECK_KINDS, "check kind")
        body = check_node.value[0][1]
        at = f"{at}.{kind}"
        line = _line(check_node)
        if kind == "launches":
            f = ctx.mapping(body, at, ("step", "equals"), ("step", "equals"))
            s = step_ref(f["step"][1], f"{at}.step")
            n = ctx.integer(f["equals"][1], f"{at}.equals", minimum=0)
            pending.append(lambda idx, s=s, n=n, line=line: LaunchesCheck(idx[id(s)], n, line))
        elif kind == "output":
            f = ctx.mapping(body, at, ("step", "oracle", "equals", "shape", "dtype"), ("step",))
            s = step_ref(f["step"][1], f"{at}.step", ("call", "method"))
            oracle = ctx.typed(f["oracle"][1], f"{at}.oracle", (bool,), "true or false") if "oracle" in f else False
            if oracle and (by_name.get(s["name"]) is None or b.bound[s["name"]].chain is None or b.bound[s["name"]].input is None):
                raise ctx.fail(f["oracle"][1], f"{at}.oracle", f"step {s['name']!r} is not a call of run_eager or of a runner built with a literal op list on a known input, so no oracle is known")
            equals = _array(ctx, f["equals"][1], f"{at}.equals") if "equals" in f else None
            shape = tuple(ctx.integer(d, f"{at}.shape[{j}]", 0) for j, d in enumerate(ctx.sequence(f["shape"][1], f"{at}.shape"))) if "shape" in f else None
            dtype = ctx.choice(f["dtype"][1], f"{at}.dtype", FLOAT_DTYPES, "dtype") if "dtype" in f else None
            if not (oracle or equals or shape is not None or dtype):
                raise ctx.fail(body, at, "say what to compare: oracle: true, equals, shape or dtype")
            pending.append(lambda idx, s=s, o=oracle, e=equals, sh=shape, d=dtype, line=line: OutputCheck(idx[id(s)], b.bound[s["name"]].chain if o else None, e, sh, d, line))
        elif kind == "value":
            f = ctx.mapping(body, at, ("step", "equals"), ("step", "equals"))
            s = step_ref(f["step"][1], f"{at}.step")
            v = _plain(ctx, f["equals"][1], f"{at}.equals")
            pending.append(lambda idx, s=s, v=v, line=line: ValueCheck(idx[id(s)], v, "the value returned", False, line))
        elif kind == "raises":
            f = ctx.mapping(body, at, ("step", "type"), ("step",))
            s = step_ref(f["step"][1], f"{at}.step")
            t = ctx.typed(f["type"][1], f"{at}.type", (str,), "an exception class name") if "type" in f else None
            if t is not None and not set(t) <= EXCEPTION_NAME_CHARS:
                raise ctx.fail(f["type"][1], f"{at}.type", f"expected an exception class name, got {t!r}")
            pending.append(lambda idx, s=s, t=t, line=line: RaisesCheck(idx[id(s)], t, line))
        elif kind in ("num_captured", "num_graphs", "attribute", "step_mode"):
            allowed = ("of", "equals", "after") + (("name",) if kind == "attribute" else ())
            f = ctx.mapping(body, at, allowed, ("of", "equals") + (("name",) if kind == "attribute" else ()))
            of = ctx.ident(f["of"][1], f"{at}.of")
            if of not in b.bound or b.bound[of].kind not in ("runner", "machine"):
                raise ctx.fail(f["of"][1], f"{at}.of", f"expected the name of a built object, got {of!r}")
            if kind == "step_mode":
                v: object = ctx.choice(f["equals"][1], f"{at}.equals", STEP_MODES, "step mode")
                step = {"action": "method", "target": "step_mode", "on": of}
                what = f"{of}.step_mode()"
            else:
                attr = ctx.ident(f["name"][1], f"{at}.name") if kind == "attribute" else kind
                v = ctx.integer(f["equals"][1], f"{at}.equals", 0) if kind != "attribute" else _plain(ctx, f["equals"][1], f"{at}.equals")
                step = {"action": "read", "target": attr, "on": of}
                what = f"{of}.{attr}"
            s = implicit(f["after"][1] if "after" in f else None, at, step)
            pending.append(lambda idx, s=s, v=v, what=what, enum=(kind == "step_mode"), line=line: ValueCheck(idx[id(s)], v, what, enum, line))
        elif kind == "static_buffer":
            f = ctx.mapping(body, at, ("of", "steps"), ("of", "steps"))
            of = ctx.ident(f["of"][1], f"{at}.of")
            if of not in b.bound or b.bound[of].cls != "GraphRunner" or b.bound[of].chain is None:
                raise ctx.fail(f["of"][1], f"{at}.of", f"expected the name of a GraphRunner built with a literal op list (a PiecewiseGraphRunner has no graphs table), got {of!r}")
            members = [step_ref(n, f"{at}.steps[{j}]", ("call",)) for j, n in enumerate(ctx.sequence(f["steps"][1], f"{at}.steps", 2))]
            shapes = set()
            for j, m in enumerate(members):
                info = b.bound.get(m["name"])
                if m["target"] != of or info is None or not isinstance(info.input, ArrayValue):
                    raise ctx.fail(f["steps"][1], f"{at}.steps[{j}]", f"step {m['name']!r} must be a named call of {of!r} with a literal array input")
                shapes.add(_padded_shape(info.input.shape, b.bound[of].capture_sizes))
            if len(shapes) != 1:
                raise ctx.fail(f["steps"][1], f"{at}.steps", f"the steps' inputs land in different buffer shapes {sorted(shapes)}; list steps of one graph")
            for m in members:
                m["observe_graphs"] = True
            pending.append(lambda idx, of=of, ms=members, sh=shapes.pop(), n=_literal_op_count(by_name[of]), line=line: StaticBufferCheck(of, tuple(idx[id(m)] for m in ms), sh, line, n))
        elif kind == "fused_ops":
            f = ctx.mapping(body, at, ("step",), ("step",))
            s = step_ref(f["step"][1], f"{at}.step", ("call",))
            info = b.bound.get(s["name"])
            if s["target"] != "fuse_elementwise" or info is None or info.chain is None or info.list_id is None:
                raise ctx.fail(f["step"][1], f"{at}.step", f"step {s['name']!r} must be a call of fuse_elementwise on a literal op list")
            flags = tuple(op.kind.elementwise for op in info.chain)
            pending.append(lambda idx, s=s, lid=info.list_id, fl=flags, line=line: FusedOpsCheck(idx[id(s)], lid, fl, line))
        elif kind == "padded_rows":
            f = ctx.mapping(body, at, ("of", "steps", "op"), ("of", "steps"))
            of = ctx.ident(f["of"][1], f"{at}.of")
            if of not in b.bound or b.bound[of].kind != "runner" or b.bound[of].list_id is None or not b.bound[of].capture_sizes:
                raise ctx.fail(f["of"][1], f"{at}.of", f"expected the name of a runner built with a literal op list and capture_sizes, got {of!r}")
            op = ctx.integer(f["op"][1], f"{at}.op", 0) if "op" in f else 0
            if op >= len(b.bound[of].chain or ()):
                raise ctx.fail(f["op"][1], f"{at}.op", f"{of!r} has only {len(b.bound[of].chain or ())} ops")
            members = [step_ref(n, f"{at}.steps[{j}]", ("call",)) for j, n in enumerate(ctx.sequence(f["steps"][1], f"{at}.steps", 1))]
            batches = set()
            for j, m in enumerate(members):
                info = b.bound.get(m["name"])
                if m["target"] != of or info is None or not isinstance(info.input, ArrayValue) or not info.input.shape:
                    raise ctx.fail(f["steps"][1], f"{at}.steps[{j}]", f"step {m['name']!r} must be a named call of {of!r} with a literal array input of at least one dimension")
                padded = _padded_shape(info.input.shape, b.bound[of].capture_sizes)
                if padded[0] <= info.input.shape[0]:
                    raise ctx.fail(f["steps"][1], f"{at}.steps[{j}]", f"the batch of step {m['name']!r} fills its buffer (no padded rows to check); use a batch below a capture size")
                batches.add(padded[0])
            if len(batches) != 1:
                raise ctx.fail(f["steps"][1], f"{at}.steps", f"the steps' inputs pad to different batches {sorted(batches)}; list steps of one graph")
            pending.append(lambda idx, of=of, lid=b.bound[of].list_id, ms=members, pb=batches.pop(), op=op, line=line: PaddedRowsCheck(of, lid, tuple(idx[id(m)] for m in ms), pb, op, line))
        else:  # witness
            f = ctx.mapping(body, at, ("of", "capture", "replay", "op"), ("of", "capture", "replay"))
            of = ctx.ident(f["of"][1], f"{at}.of")
            if of not in b.bound or b.bound[of].kind != "runner" or b.bound[of].list_id is None:
                raise ctx.fail(f["of"][1], f"{at}.of", f"expected the name of a runner built with a literal op list, got {of!r}")
            cap = step_ref(f["capture"][1], f"{at}.capture", ("call",))
            rep = step_ref(f["replay"][1], f"{at}.replay", ("call",))
            for n, s in ((f["capture"][1], cap), (f["replay"][1], rep)):
                if s["target"] != of:
                    raise ctx.fail(n, at, f"step {s['name']!r} does not call {of!r}")
            op = ctx.integer(f["op"][1], f"{at}.op", 0) if "op" in f else 0
            if op >= len(b.bound[of].chain or ()):
                raise ctx.fail(f["op"][1], f"{at}.op", f"{of!r} has only {len(b.bound[of].chain or ())} ops")
            if cap["position"] >= rep["position"]:
                raise ctx.fail(f["replay"][1], f"{at}.replay", "the replay step must come after the capture step")
            pending.append(lambda idx, of=of, lid=b.bound[of].list_id, c=cap, r=rep, op=op, line=line: WitnessCheck(of, lid, idx[id(c)], idx[id(r)], op, line))

    # Lay out the final step order: implicit reads right after their anchor, the rest at the end.
    ordered: list[dict] = []
    for s in raw_steps:
        ordered.append(s)
        ordered.extend(implicit_after.get(s["position"], []))
    ordered.extend(implicit_after.get(None, []))
    index = {id(s): i for i, s in enumerate(ordered)}
    steps = tuple(
        Step(
            index=i,
            action=s["action"],
            target=s["target"],
            on=s["on"],
            name=s["name"] if s["name"] else (f"_check{i}" if s.get("implicit") else None),
            args=tuple(s["args"]),
            kwargs=tuple(s["kwargs"].items()),
            observe_graphs=s.get("observe_graphs", False),
            implicit=s.get("implicit", False),
            line=s["line"],
        )
        for i, s in enumerate(ordered)
    )
    checks = tuple(make(index) for make in pending)
    oracles = tuple(
        OracleCall(index[id(s)], b.bound[s["name"]].chain, b.bound[s["name"]].input)
        for s in raw_steps
        if s["name"] and b.bound[s["name"]].kind == "result" and b.bound[s["name"]].chain is not None and b.bound[s["name"]].input is not None
    )
    case = Case(spec=spec_id, id=case_id, description=description, steps=steps, checks=checks, file=ctx.path, line=_line(node))
    return case, oracles


# ------------------------------------------------------------ specs and files
_SPEC_KEYS = ("id", "title", "tag", "points", "visibility", "explanation", "hint", "cases")


def _parse_spec(ctx: _Ctx, node: Node, where: str, oracles: dict[str, tuple[OracleCall, ...]]) -> Spec:
    fields = ctx.mapping(node, where, _SPEC_KEYS, _SPEC_KEYS)
    spec_id = ctx.ident(fields["id"][1], f"{where}.id")
    points = ctx.number(fields["points"][1], f"{where}.points")
    if points <= 0:
        raise ctx.fail(fields["points"][1], f"{where}.points", f"expected a positive number, got {points}")
    cases = []
    seen: dict[str, int] = {}
    for i, case_node in enumerate(ctx.sequence(fields["cases"][1], f"{where}.cases", 1)):
        case, case_oracles = _parse_case(ctx, case_node, f"{where}.cases[{i}]", spec_id)
        if case.id in seen:
            raise ctx.fail(case_node, f"{where}.cases[{i}].id", f"duplicate case id {case.id!r} (first at line {seen[case.id]})")
        seen[case.id] = case.line
        oracles[case.uid] = case_oracles
        cases.append(case)
    return Spec(
        id=spec_id,
        title=ctx.text(fields["title"][1], f"{where}.title"),
        tag=ctx.choice(fields["tag"][1], f"{where}.tag", TAGS, "behaviour tag"),
        points=float(points),
        visibility=ctx.choice(fields["visibility"][1], f"{where}.visibility", VISIBILITIES, "visibility"),
        explanation=ctx.text(fields["explanation"][1], f"{where}.explanation"),
        hint=ctx.text(fields["hint"][1], f"{where}.hint"),
        cases=tuple(cases),
        file=ctx.path,
        line=_line(node),
    )


MAX_NESTING = 40


def _refuse_deep_nesting(text: str, path: str) -> None:
    """Spec files nest a few levels deep; a pathological nest would make YAML's recursive parser
    slow or overflow the stack, so it is refused up front, in one pass over the events."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            line = event.start_mark.line + 1
            raise SpecError(f"{path}:{line}: YAML anchors and aliases (&name, *name) are not supported in spec files; write the value out")
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_NESTING:
                raise SpecError(f"{path}:{event.start_mark.line + 1}: nested more than {MAX_NESTING} levels deep")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def load_spec_text(text: str, path: str, oracles: dict[str, tuple[OracleCall, ...]] | None = None) -> SpecFile:
    """Parse one spec file's text; raises :class:`SpecError` on the first problem."""
    ctx = _Ctx(path)
    oracles = {} if oracles is None else oracles
    try:
        _refuse_deep_nesting(text, path)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        from grader.yaml_errors import explain

        line, message = explain(exc, text)
        raise SpecError(f"{path}:{line}: {message}") from None
    except yaml.reader.ReaderError as exc:  # unmarked: find the line from the position
        line = text.count("\n", 0, exc.position) + 1
        raise SpecError(f"{path}:{line}: YAML error: character {exc.character!r} is not allowed in YAML text") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}:1: YAML error: " + " ".join(str(exc).split())) from None
    except RecursionError:
        raise SpecError(f"{path}:1: nested too deeply") from None
    if root is None:
        raise SpecError(f"{path}:1: the file is empty (expected 'format: {SPEC_FORMAT}' and 'specs:')")
    _refuse_tags(ctx, root)
    fields = ctx.mapping(root, "", ("format", "specs"), ("format", "specs"))
    fmt = ctx.integer(fields["format"][1], "format")
    if fmt != SPEC_FORMAT:
        raise ctx.fail(fields["format"][1], "format", f"this grader reads format {SPEC_FORMAT}, the file says {fmt}")
    specs = []
    seen: dict[str, int] = {}
    for i, node in enumerate(ctx.sequence(fields["specs"][1], "specs", 1)):
        spec = _parse_spec(ctx, node, f"specs[{i}]", oracles)
        if spec.id in seen:
            raise ctx.fail(node, f"specs[{i}].id", f"duplicate spec id {spec.id!r} (first at line {seen[spec.id]})")
        seen[spec.id] = spec.line
        specs.append(spec)
    return SpecFile(path=path, format=fmt, specs=tuple(specs))


@dataclass(frozen=True)
class LoadedSuite:
    """A suite plus what the judge derives statically from it (oracle calls per case)."""

    suite: Suite
    oracles: dict[str, tuple[OracleCall, ...]]


def spec_files(directory: str | Path) -> list[Path]:
    return sorted(p for p in Path(directory).glob("*.yaml") if p.is_file())


def load_suite(directory: str | Path) -> LoadedSuite:
    """Load every ``*.yaml`` in a directory; raises :class:`SpecErrors` listing every problem."""
    directory = Path(directory)
    if not directory.is_dir():
        raise SpecErrors([SpecError(f"{directory}: not a directory of spec files")])
    paths = spec_files(directory)
    if not paths:
        raise SpecErrors([SpecError(f"{directory}: no *.yaml spec files here")])
    errors: list[SpecError] = []
    files: list[SpecFile] = []
    oracles: dict[str, tuple[OracleCall, ...]] = {}
    first_seen: dict[str, str] = {}
    for path in paths:
        shown = str(path)
        try:
            if path.stat().st_size > MAX_SPEC_FILE_BYTES:
                raise SpecError(f"{shown}:1: larger than {MAX_SPEC_FILE_BYTES} bytes")
            text = path.read_text(encoding="utf-8")
            spec_file = load_spec_text(text, shown, oracles)
        except SpecError as exc:
            errors.append(exc)
            continue
        except UnicodeDecodeError:
            errors.append(SpecError(f"{shown}:1: not UTF-8 text"))
            continue
        except RecursionError:
            errors.append(SpecError(f"{shown}:1: nested too deeply"))
            continue
        except OSError as exc:
            errors.append(SpecError(f"{shown}:1: cannot read ({exc.strerror})"))
            continue
        for i, spec in enumerate(spec_file.specs):
            if spec.id in first_seen:
                errors.append(SpecError(f"{shown}:{spec.line}: specs[{i}].id: duplicate spec id {spec.id!r} (also in {first_seen[spec.id]})"))
            first_seen.setdefault(spec.id, f"{shown}:{spec.line}")
        files.append(spec_file)
    if errors:
        raise SpecErrors(errors)
    return LoadedSuite(Suite(tuple(files)), oracles)
