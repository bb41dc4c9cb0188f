"""A check kind a lab pack defines (``lab.yaml: checks.own``): which calls a step made on an
object the lab provides.

``KIND: {of: OBJECT, during: STEP, KEY: ...}``: ``of`` names the step that built the provided
object (``build: NAME`` of a ``lab.yaml: provided`` object), ``during`` any step of the case
with ``as``; the other keys (the check's ``keys``, plain values) go to the pack's ``parse``
function, whose ``ValueError`` becomes a ``file:line`` error. The worker sends the calls each
provided object's log recorded during every step; the pack's ``judge`` function compares them
with what was accepted and returns ``passed``, ``claim``, ``expected`` and ``actual``. The
engine holds no rule of the pack: it only carries the data to the pack's two functions, and
names the student's line of the first call that differs from every accepted list.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from grader.lab import Lab
from grader.lab.interface import OwnCheck
from grader.lab.loading import LAB_FILE, LabError, pack_attribute, pack_module
from grader.spec.checks.base import REGISTRY, Check
from grader.spec.describing import outcome
from grader.spec.locating import call_at
from grader.spec.schema_parts import STEP_NAME, schema_object
from grader.spec.spec_reading import read_plain


@dataclass(frozen=True)
class PackCheck(Check):
    """The base of every pack-owned kind; :func:`pack_check_class` makes one subclass per kind."""

    of: str
    during: int
    accepted: Any  # what the pack's parse returned (plain, hashable data)
    line: int = 0

    abstract: ClassVar[bool] = True
    lab_owned: ClassVar[bool] = True  # not in the engine's registry: the active lab lists it
    step_fields: ClassVar[tuple[str, ...]] = ("during",)
    own: ClassVar[OwnCheck]
    lab: ClassVar[Lab]

    @classmethod
    def parse(cls, draft, body, at, line):
        reader = draft.reader
        keys = cls.own.keys
        fields = reader.mapping(body, at, ("of", "during", *keys), ("of", "during"))
        of = reader.ident(fields["of"][1], f"{at}.of")
        bound = draft.bound.get(of)
        if bound is None or bound.kind != "provided" or bound.cls != cls.own.observes:
            raise reader.fail(
                fields["of"][1], f"{at}.of", f"expected the name of a built {cls.own.observes}, got {of!r}"
            )
        during = draft.step(fields["during"][1], f"{at}.during")
        given = {k: _plain(reader, fields[k][1], f"{at}.{k}") for k in keys if k in fields}
        try:
            accepted = pack_attribute(cls.lab, cls.own.parse)(**given)
        except ValueError as exc:
            raise reader.fail(body, at, str(exc)) from None
        return cls(of, during.key, accepted, line)

    @classmethod
    def schema(cls):
        props = {"of": STEP_NAME, "during": STEP_NAME, **{k: {"type": "array"} for k in cls.own.keys}}
        return schema_object(props, ("of", "during"))

    def judge(self, j):
        step, obs = j.case.steps[self.during], j.obs[self.during]
        ran = obs.outcome in ("returned", "raised")
        calls = dict(obs.calls).get(self.of) if ran else None
        observed = None if calls is None and not ran else [list(c.items) for c in calls or ()]
        verdict = pack_attribute(self.lab, self.own.judge)(
            step.name or f"step {step.index + 1}", self.accepted, observed
        )
        actual = verdict.actual if ran else outcome(obs)
        at = ""
        if not verdict.passed and calls:
            at = call_at(obs, calls[-1].site, f"the last call on {self.of} during this step:")
        j.record(
            step,
            verdict.claim,
            verdict.expected,
            actual,
            None if verdict.passed else f"{verdict.claim}; was {actual}.",
            at,
        )


def _plain(reader, node: Node, where: str) -> Any:
    """A check key's value as plain Python (lists as lists, for the pack's parser)."""
    if isinstance(node, SequenceNode):
        return [_plain(reader, item, f"{where}[{i}]") for i, item in enumerate(node.value)]
    if isinstance(node, (ScalarNode, MappingNode)):
        return read_plain(reader, node, where)
    raise reader.fail(node, where, "expected a plain value")


@cache
def pack_check_class(lab: Lab, own: OwnCheck) -> type[PackCheck]:
    """The check class of one of ``lab``'s own kinds (made once per lab and kind)."""
    order = 1000 + lab.own_checks.index(own)
    name = "PackCheck_" + own.kind
    return dataclass(frozen=True)(type(name, (PackCheck,), {"kind": own.kind, "order": order, "own": own, "lab": lab}))


@cache
def pack_kind_classes(lab: Lab) -> tuple[type[Check], ...]:
    """The check kinds the pack's ``checks.modules`` define, written as the engine's own kinds are
    (one :class:`Check` subclass each, with ``lab_owned = True`` so that it stays out of the
    engine's registry), checked as the registry checks the engine's: a kind, an integer order
    that no other kind takes, and its parse, schema and judge. A wrong one is a :class:`LabError`."""
    found: dict[str, type[Check]] = {}
    taken = {cls.order: kind for kind, cls in REGISTRY.items()}
    for i, dotted in enumerate(lab.check_modules):
        where = f"{lab.root / LAB_FILE}: checks.modules[{i}]: {dotted}"
        try:
            module = pack_module(lab, dotted)
        except LabError:
            raise
        except Exception as exc:  # noqa: BLE001 - the pack's code: one line naming the module, not a traceback
            raise LabError(f"{where}: cannot be imported: {type(exc).__name__}: {exc}") from None
        kinds = [
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Check) and v.__module__ == module.__name__ and "kind" in v.__dict__
        ]
        if not kinds:
            raise LabError(f"{where}: defines no check kind (a Check subclass with a kind)")
        for cls in kinds:
            missing = [
                n for n in ("parse", "schema", "judge") if next(k for k in cls.__mro__ if n in k.__dict__) is Check
            ]
            problem = (
                "is not marked lab_owned = True"
                if not cls.__dict__.get("lab_owned", False)
                else f"does not define {', '.join(missing)}"
                if missing
                else "sets no integer 'order'"
                if not isinstance(cls.__dict__.get("order"), int)
                else "is a kind the engine already has"
                if cls.kind in REGISTRY or cls.kind in found
                else f"takes order {cls.order}, already the order of {taken.get(cls.order)!r}"
                if cls.order in taken
                else ""
            )
            if problem:
                raise LabError(f"{where}: check kind {cls.kind!r} {problem}")
            found[cls.kind] = cls
            taken[cls.order] = cls.kind
    return tuple(found.values())
