"""A case while it is being loaded: its steps as drafted, and what is known statically about each name.

The loader reads a case in two passes: *parse* (each step, then each check, in the
order the file gives them) and *link* (lay the steps out in their final order, with
the reads a check asked for inserted, and turn every step reference into an index).
This module holds the state between the two, and is the whole interface a step kind
(:mod:`grader.suite.steps`) or a check kind (:mod:`grader.suite.checks`) needs while parsing:

* :class:`DraftStep` — a step before it has its final index; checks refer to steps by
  their ``key``, which never changes;
* :class:`Bound` — what the loader knows about a name without running anything: a
  runner's op chain and capture sizes, a call's input, so that checks can be judged
  against an oracle and refused early when they could never be;
* :class:`CaseDraft` — the names bound so far, step lookups that fail with ``file:line``
  errors, and the implicit reads checks such as ``num_captured`` add.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from yaml.nodes import Node

from grader.lab import active as active_lab
from grader.spec_model import ArrayValue, OpSpec, OpsValue, PlainValue, RefValue, Step, Value
from grader.step_kinds import step_kind
from grader.suite.spec_reading import NodeReader, node_line, read_value


@dataclass
class DraftStep:
    """A step as parsed, before the case's final step order is known.

    ``key`` identifies the step for the whole load (checks hold keys until linking);
    ``position`` is its place among the file's own steps (None for a read a check added).
    """

    key: int
    action: str
    line: int
    position: int | None
    target: str = ""
    on: str | None = None
    name: str | None = None
    args: list[Value] = field(default_factory=list)
    kwargs: dict[str, Value] = field(default_factory=dict)
    observe_graphs: bool = False
    follow_values: bool = False
    implicit: bool = False

    def arg(self, position: int | None, keyword: str) -> Value | None:
        """The argument given by keyword, else at ``position`` (None: by keyword only); None when not given."""
        if keyword in self.kwargs:
            return self.kwargs[keyword]
        return self.args[position] if position is not None and len(self.args) > position else None


@dataclass(frozen=True)
class Bound:
    """What the loader knows statically about a name bound by a step.

    ``kind``: ``runner`` (a built entry point the lab says ``binds: runner``), ``provided`` (an object
    the lab provides), ``machine`` (another built object), ``ops`` (a list a ``binds: ops`` function
    returned) or ``result`` (any other call).
    """

    kind: str
    chain: tuple[OpSpec, ...] | None = None  # the op chain, when built from a literal list
    list_id: int | None = None  # which literal op list of the case (the worker numbers them alike)
    capture_sizes: tuple[int, ...] | None = None
    input: Value | None = None  # a call's input, when the judge can rebuild it
    cls: str | None = None  # the class a runner was built from


def padded_shape(shape: tuple[int, ...], sizes: tuple[int, ...] | None) -> tuple[int, ...]:
    """The lab's padding rule, as the specs rely on it: a batch is padded up to the smallest
    capture size that holds it; a batch larger than every size is not padded."""
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


class CaseDraft:
    """The names, steps and implicit reads of one case while it is parsed (see the module doc)."""

    def __init__(self, reader: NodeReader) -> None:
        self.reader = reader
        self.steps: list[DraftStep] = []  # the file's own steps, in order
        self.bound: dict[str, Bound] = {}
        self._by_name: dict[str, DraftStep] = {}
        self._reads_after: dict[int | None, list[DraftStep]] = {}  # implicit reads, by anchor position
        self._list_ids: dict[int, int] = {}  # id(OpsValue) -> the case's list number
        self._next_key = 0

    # ------------------------------------------------------------ drafting steps
    def new_step(self, action: str, line: int, position: int | None) -> DraftStep:
        step = DraftStep(key=self._next_key, action=action, line=line, position=position)
        self._next_key += 1
        return step

    def value(self, node: Node, where: str) -> Value:
        """A value a step gives (``file:line`` errors); it may name any step bound so far."""
        return read_value(self.reader, node, where, set(self.bound))

    def number_lists(self, values: list[Value]) -> None:
        """Give each literal op list its case-wide number, in the order the worker meets them."""
        for value in values:
            if isinstance(value, OpsValue):
                self._list_ids[id(value)] = len(self._list_ids)

    def add(self, step: DraftStep) -> None:
        """Append one of the file's steps and record what its name is bound to."""
        self.steps.append(step)
        if step.name:
            self._by_name[step.name] = step
            self.bound[step.name] = self._binding(step)

    def chain_of(self, value: Value | None) -> tuple[tuple[OpSpec, ...], int] | None:
        """The op chain and list number a value stands for, when it is a literal list or names one."""
        if isinstance(value, OpsValue):
            return value.chain, self._list_ids[id(value)]
        if isinstance(value, RefValue):
            bound = self.bound.get(value.name)
            if bound is not None and bound.chain is not None and bound.list_id is not None:
                return bound.chain, bound.list_id
        return None

    def _binding(self, step: DraftStep) -> Bound:
        """What a step's name is bound to, as its kind says (:meth:`grader.step_kinds.StepKind.binding`)."""
        return step_kind(step.action).binding(self, step)

    def built(self, step: DraftStep) -> Bound:
        """A build step's object: a runner (its op chain and capture sizes, lab.yaml: ``binds:
        runner``), an object the lab provides, or any other built object."""
        target = step.target
        entry = active_lab().entry_point(target)  # what the lab says a step of it binds (lab.yaml: binds, params)
        if entry is not None and entry.binds == "runner":
            chain = self.chain_of(step.arg(entry.position("ops"), "ops"))
            sizes_value = step.arg(entry.position("capture_sizes"), "capture_sizes")
            sizes = None
            if (
                isinstance(sizes_value, PlainValue)
                and isinstance(sizes_value.value, tuple)
                and all(type(s) is int for s in sizes_value.value)
            ):
                sizes = sizes_value.value
            return Bound("runner", chain[0] if chain else None, chain[1] if chain else None, sizes, cls=target)
        if active_lab().provided_object(target) is not None:
            return Bound("provided", cls=target)  # an object the lab provides (grader.observe.provided)
        return Bound("machine")

    def called(self, step: DraftStep) -> Bound:
        """A call step's result: an op list (``binds: ops``), a function's result on an op chain
        (``binds: result``), or a built runner's result on its own chain."""
        target = step.target
        entry = active_lab().entry_point(target)
        binds = entry.binds if entry is not None else None
        if binds == "ops":
            chain = self.chain_of(step.arg(entry.position("ops"), "ops"))
            return Bound("ops", chain[0] if chain else None, chain[1] if chain else None)
        if binds == "result":
            chain = self.chain_of(step.arg(entry.position("ops"), "ops"))
            return Bound(
                "result",
                chain[0] if chain else None,
                chain[1] if chain else None,
                input=self._known_input(step.arg(entry.position("x"), "x")),
            )
        runner = self.bound.get(target)
        if runner is not None and runner.kind == "runner":
            return Bound(
                "result", runner.chain, runner.list_id, runner.capture_sizes, input=self._known_input(step.arg(0, "x"))
            )
        return Bound("result")

    @staticmethod
    def result(step: DraftStep) -> Bound:
        """Any other step's value: a result, nothing known of it before it runs."""
        return Bound("result")

    def _known_input(self, value: Value | None) -> Value | None:
        """An input the judge can rebuild: a literal array, or the result of an earlier oracle call."""
        if isinstance(value, ArrayValue):
            return value
        if isinstance(value, RefValue):
            source = self.bound.get(value.name)
            if source is not None and source.kind == "result" and source.chain is not None and source.input is not None:
                return value
        return None

    # ------------------------------------------------------------ what checks ask for
    def step(self, node: Node, at: str, actions: tuple[str, ...] | None = None) -> DraftStep:
        """The step a check names at ``node`` (an ``as`` name), of one of ``actions`` when given."""
        name = self.reader.ident(node, at)
        if name not in self._by_name:
            raise self.reader.fail(node, at, f"no step is named {name!r}")
        step = self._by_name[name]
        if actions and step.action not in actions:
            raise self.reader.fail(
                node, at, f"step {name!r} is a {step.action} step; this check needs a {' or '.join(actions)} step"
            )
        return step

    def read_after(self, after: Node | None, at: str, action: str, target: str, on: str) -> DraftStep:
        """Add a read (or a method call) a check needs the worker to make: right after the step
        named at ``after``, or at the end of the case when ``after`` is None."""
        anchor = self.step(after, f"{at}.after").position if after is not None else None
        step = self.new_step(action, node_line(after) if after is not None else 0, None)
        step.target, step.on, step.implicit = target, on, True
        self._reads_after.setdefault(anchor, []).append(step)
        return step

    def literal_op_count(self, runner: str) -> int | None:
        """How many ops a runner holds, when it was built from a literal op list (a fused list's
        length is the submission's business)."""
        ops = self._by_name[runner].arg(0, "ops")
        return len(ops.chain) if isinstance(ops, OpsValue) else None

    # ------------------------------------------------------------ linking
    def layout(self) -> tuple[tuple[Step, ...], dict[int, int]]:
        """The final steps (each implicit read right after its anchor, the rest at the end) and
        the index of every step key."""
        ordered: list[DraftStep] = []
        for step in self.steps:
            ordered.append(step)
            ordered.extend(self._reads_after.get(step.position, []))
        ordered.extend(self._reads_after.get(None, []))
        index_of = {s.key: i for i, s in enumerate(ordered)}
        steps = tuple(
            Step(
                index=i,
                action=s.action,  # type: ignore[arg-type]
                target=s.target,
                on=s.on,
                name=s.name if s.name else (f"_check{i}" if s.implicit else None),
                args=tuple(s.args),
                kwargs=tuple(s.kwargs.items()),
                observe_graphs=s.observe_graphs,
                follow_values=s.follow_values,
                implicit=s.implicit,
                line=s.line,
            )
            for i, s in enumerate(ordered)
        )
        return steps, index_of

    def oracle_calls(self, index_of: Mapping[int, int]) -> tuple[OracleCall, ...]:
        """The calls whose output the judge computes itself: a known op chain on a known input."""
        calls = []
        for step in self.steps:
            bound = self.bound.get(step.name) if step.name else None
            if bound is not None and bound.kind == "result" and bound.chain is not None and bound.input is not None:
                calls.append(OracleCall(index_of[step.key], bound.chain, bound.input))
        return tuple(calls)
