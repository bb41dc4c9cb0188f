"""Step kinds: one class per action a case can take (build, call, method, read, set, mutate, probe).

Each kind owns its YAML form: which keys it takes, how its target is checked (with
``file:line`` errors) and its JSON Schema fragment. The registry (``STEP_KINDS``, in
the order specs/README.md documents them) is the only list of actions: the loader
and the schema both read it. What a step *does* in the worker is the interpreter's
business (:mod:`grader.observe.interpreter`); a test keeps the two in step.
"""

from __future__ import annotations

from typing import ClassVar

from yaml.nodes import Node

from grader.lab import active as active_lab
from grader.lab.loading import pack_attribute
from grader.spec_model import OpsValue, PlainValue
from grader.suite.case_draft import CaseDraft, DraftStep
from grader.suite.schema_parts import schema_ident, schema_object
from grader.suite.spec_reading import read_value

# What a build step may construct, the functions a call step may call and the keyword names a
# step may pass are the lab's (grader.lab: lab.yaml's entry points, provided objects and kwargs).
STEP_KEYS = ("as", "of", "args", "kwargs", "value", "fill")  # besides the action key itself


class StepKind:
    """One action. Subclasses set ``action`` and ``forbidden`` (keys the action does not take)
    and implement :meth:`parse_target` and :meth:`schema`."""

    action: ClassVar[str]
    forbidden: ClassVar[tuple[str, ...]]
    description: ClassVar[str]

    @classmethod
    def parse_target(
        cls, draft: CaseDraft, fields: dict[str, tuple[Node, Node]], node: Node, where: str, step: DraftStep
    ) -> None:
        """Fill in ``step.target`` (and ``on``, ``args`` where the action has its own form)."""
        raise NotImplementedError

    @classmethod
    def schema(cls, common: dict) -> dict:
        """This action's JSON Schema; ``common`` holds the shared ``as``, ``args`` and ``kwargs``."""
        raise NotImplementedError

    @staticmethod
    def need_on(draft: CaseDraft, fields: dict, node: Node, where: str, action: str, also: tuple[str, ...] = ()) -> str:
        """The ``of`` object a method/read/set acts on: an earlier step's name (or one of ``also``)."""
        if "of" not in fields:
            raise draft.reader.fail(node, where, f"a {action} step needs 'of': the object it acts on")
        on = draft.reader.ident(fields["of"][1], f"{where}.of")
        if on not in draft.bound and on not in also:
            raise draft.reader.fail(fields["of"][1], f"{where}.of", f"no earlier step is named {on!r}")
        return on


class Build(StepKind):
    action, forbidden, description = "build", ("of", "value", "fill"), "construct a contract class"

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        lab = active_lab()
        step.target = draft.reader.choice(fields["build"][1], f"{where}.build", lab.buildable, "buildable class")
        if step.name is None:
            raise draft.reader.fail(node, where, "a build step needs 'as': the name later steps use")
        provided = lab.provided_object(step.target)
        if provided is not None:
            cls.check_provided(draft, fields, where, step, provided, lab)

    @staticmethod
    def check_provided(draft, fields, where, step, provided, lab) -> None:
        """A provided object takes no args, only its own kwargs as plain values; its setup must
        accept them (a ``ValueError`` of the pack's setup is this step's file:line error)."""
        if step.args:
            raise draft.reader.fail(fields["args"][0], f"{where}.args", f"{provided.name} takes no args, only kwargs")
        for key, value in step.kwargs.items():
            if key not in provided.kwargs or not isinstance(value, PlainValue):
                allowed = ", ".join(provided.kwargs) or "none"
                raise draft.reader.fail(
                    fields["kwargs"][1], f"{where}.kwargs.{key}", f"{provided.name} takes plain kwargs only: {allowed}"
                )
        try:
            pack_attribute(lab, provided.setup)(**{k: _as_python(v.value) for k, v in step.kwargs.items()})
        except ValueError as exc:
            raise draft.reader.fail(fields["kwargs"][1], f"{where}.kwargs", str(exc)) from None

    @classmethod
    def schema(cls, common):
        return schema_object(
            {"build": {"enum": list(active_lab().buildable)}, **common}, ("build", "as"), cls.description
        )


class Call(StepKind):
    action, forbidden, description = "call", ("of", "value", "fill"), "call a contract function or a built object"

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        target_node = fields["call"][1]
        target = draft.reader.ident(target_node, f"{where}.call")
        functions = active_lab().contract_functions
        if target not in functions and target not in draft.bound:
            choices = " or ".join((*functions, "an earlier step's name"))
            raise draft.reader.fail(target_node, f"{where}.call", f"expected {choices}, got {target!r}")
        step.target = target

    @classmethod
    def schema(cls, common):
        functions = " or ".join(active_lab().contract_functions)
        described = f"{functions}, or an earlier step's name" if functions else "an earlier step's name"
        target = {"type": "string", "description": described}
        return schema_object({"call": target, **common}, ("call",), cls.description)


class Method(StepKind):
    action, forbidden, description = "method", ("value", "fill"), "call a method"

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        step.target = draft.reader.ident(fields["method"][1], f"{where}.method")
        step.on = cls.need_on(draft, fields, node, where, "method", _counter())

    @classmethod
    def schema(cls, common):
        return schema_object(
            {"method": {"type": "string"}, "of": schema_ident(_of_described()), **common},
            ("method", "of"),
            cls.description,
        )


class Read(StepKind):
    action, forbidden, description = "read", ("args", "kwargs", "value", "fill"), "read an attribute"

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        step.target = draft.reader.ident(fields["read"][1], f"{where}.read")
        step.on = cls.need_on(draft, fields, node, where, "read", _counter())

    @classmethod
    def schema(cls, common):
        return schema_object(
            {"read": {"type": "string"}, "of": schema_ident(_of_described()), "as": common["as"]},
            ("read", "of"),
            cls.description,
        )


class Set(StepKind):
    action, forbidden, description = "set", ("args", "kwargs", "fill"), "write an attribute"

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        step.target = draft.reader.ident(fields["set"][1], f"{where}.set")
        step.on = cls.need_on(draft, fields, node, where, "set")
        if "value" not in fields:
            raise draft.reader.fail(node, where, "a set step needs 'value'")
        step.args = [read_value(draft.reader, fields["value"][1], f"{where}.value", set(draft.bound))]

    @classmethod
    def schema(cls, common):
        props = {
            "set": {"type": "string"},
            "of": schema_ident("a built object"),
            "value": {"$ref": "#/$defs/value"},
            "as": common["as"],
        }
        return schema_object(props, ("set", "of", "value"), cls.description)


class Mutate(StepKind):
    action, forbidden, description = (
        "mutate",
        ("of", "args", "kwargs", "value", "as"),
        "the caller overwrites a returned array",
    )

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        target_node = fields["mutate"][1]
        target = draft.reader.ident(target_node, f"{where}.mutate")
        if target not in draft.bound or draft.bound[target].kind != "result":
            raise draft.reader.fail(
                target_node, f"{where}.mutate", f"expected the name of an earlier call's result, got {target!r}"
            )
        step.target = target
        if "fill" not in fields:
            raise draft.reader.fail(node, where, "a mutate step needs 'fill': the number written over the array")
        step.args = [PlainValue(draft.reader.number(fields["fill"][1], f"{where}.fill"))]

    @classmethod
    def schema(cls, common):
        return schema_object(
            {"mutate": schema_ident("an earlier call's result"), "fill": {"type": "number"}},
            ("mutate", "fill"),
            cls.description,
        )


class Probe(StepKind):
    """Build a runner the lab lets a probe trace (lab.yaml: ``probe``) from ``args[0]`` (its ops)
    and ``kwargs``, call it with ``args[1]`` (the
    capture) and ``args[2]`` (the replay: a new input of the same shape), under the line tracer
    (:mod:`grader.observe.line_trace`). What each of the submission's lines did is the step's
    ``trace``; the ``cites`` check judges the student's answers with it."""

    action, forbidden, description = (
        "probe",
        ("of", "value", "fill"),
        "capture then replay a runner under the line tracer",
    )

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        probed = active_lab().probe
        if not probed:
            raise draft.reader.fail(node, where, "this lab names no runner a probe step may trace (lab.yaml: probe)")
        step.target = draft.reader.choice(fields["probe"][1], f"{where}.probe", probed, "probed class")
        shapes = [getattr(a, "shape", None) for a in step.args[1:]]
        if len(step.args) != 3 or not isinstance(step.args[0], OpsValue) or None in shapes:
            raise draft.reader.fail(
                node, where, "a probe step's args are [ops, the capture's array, the replay's array]"
            )
        if shapes[0] != shapes[1] or step.args[1] == step.args[2]:
            raise draft.reader.fail(node, where, "a probe's two arrays have one shape and different values")
        if set(step.kwargs) - {"capture_sizes"}:
            raise draft.reader.fail(node, where, "a probe step takes only capture_sizes as a keyword")

    @classmethod
    def schema(cls, common):
        probed = list(active_lab().probe)
        return schema_object({"probe": {"enum": probed}, **common}, ("probe", "args"), cls.description)


STEP_KINDS: dict[str, type[StepKind]] = {kind.action: kind for kind in (Build, Call, Method, Read, Set, Mutate, Probe)}
STEP_ACTIONS = tuple(STEP_KINDS)


def parse_step(draft: CaseDraft, node: Node, where: str, position: int) -> DraftStep:
    """Read one of the file's steps (its action key decides its kind) and bind its ``as`` name."""
    reader = draft.reader
    fields = reader.mapping(node, where, STEP_ACTIONS + STEP_KEYS)
    actions = [a for a in STEP_ACTIONS if a in fields]
    if len(actions) != 1:
        raise reader.fail(node, where, f"a step has exactly one action key: {', '.join(STEP_ACTIONS)}")
    kind = STEP_KINDS[actions[0]]
    step = draft.new_step(kind.action, node.start_mark.line + 1, position)
    names = set(draft.bound)
    if "as" in fields:
        name = reader.ident(fields["as"][1], f"{where}.as")
        if name in draft.bound:
            raise reader.fail(fields["as"][1], f"{where}.as", f"the name {name!r} is already bound by an earlier step")
        step.name = name
    if "args" in fields:
        step.args = [
            read_value(reader, a, f"{where}.args[{i}]", names)
            for i, a in enumerate(reader.sequence(fields["args"][1], f"{where}.args"))
        ]
    if "kwargs" in fields:
        given = reader.mapping(fields["kwargs"][1], f"{where}.kwargs", active_lab().kwarg_names)
        step.kwargs = {k: read_value(reader, v, f"{where}.kwargs.{k}", names) for k, (_, v) in given.items()}
    draft.number_lists(step.args + list(step.kwargs.values()))
    for key in kind.forbidden:
        if key in fields:
            raise reader.fail(fields[key][0], f"{where}.{key}", f"not allowed in a {kind.action} step")
    kind.parse_target(draft, fields, node, where, step)
    draft.add(step)
    return step


def steps_schema() -> list[dict]:
    """The JSON Schema alternatives of a step, one per kind."""
    common = {
        "as": schema_ident("binds the step's result for later steps and checks"),
        "args": {"type": "array", "items": {"$ref": "#/$defs/value"}},
        "kwargs": {
            "type": "object",
            "additionalProperties": False,
            "properties": {k: {"$ref": "#/$defs/value"} for k in active_lab().kwarg_names},
        },
    }
    return [kind.schema(common) for kind in STEP_KINDS.values()]


def _counter() -> tuple[str, ...]:
    """What a method or read step may act on besides an earlier step's object: the lab's launch counter."""
    counter = active_lab().launch_counter
    return (counter,) if counter else ()


def _of_described() -> str:
    return ", or ".join(("a built object", *_counter()))


def _as_python(value):
    return [_as_python(v) for v in value] if isinstance(value, tuple) else value
