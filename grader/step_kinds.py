"""Step kinds: one class per action a case can take (build, call, method, read, set, mutate, probe).

The one home of a step kind. Each class declares, side by side:

* **parsing**: which YAML keys it takes, how its target is checked (``file:line`` errors
  through the :class:`~grader.suite.case_draft.CaseDraft` it is handed) and its JSON Schema
  properties; the loader (:mod:`grader.suite.steps`) and the schema read them;
* **running**, worker side, observing only (nothing here judges): what the step does to the
  submission's objects (:meth:`StepKind.run`, handed the case's
  :class:`~grader.observe.interpreter.CaseInterpreter`), which object it needs before it runs,
  whether it runs under the origin tracer, whether its last argument is the input it runs on;
* **describing**: the step in words (``Step.label``, on every page) and as the lines of the
  ``graphgrade repro`` script (handed the script's writer, :mod:`grader.commands.repro`),
  and what the judge and the case model read of it (the names it refers to, whether its
  launches are pictured).

The registry (:data:`STEP_KINDS`, the engine's kinds in the order specs/README.md documents
them, then those a lab's pack adds: ``lab.yaml: steps``, :func:`lab_step_kinds`) is the only
list of actions. Every stage asks it by a step's ``action``: :func:`step_kind`. Each stage's own objects come in as arguments, so this
module imports no stage (it sits with the modules every stage shares).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from grader.lab import Lab, LabError
from grader.lab import active as active_lab
from grader.lab.loading import LAB_FILE, pack_attribute
from grader.values import OpsValue, PlainValue

if TYPE_CHECKING:  # each stage hands its own object in; none is imported here
    from yaml.nodes import Node

    from grader.commands.repro import ScriptWriter
    from grader.observe.interpreter import CaseInterpreter
    from grader.spec_model import Step
    from grader.suite.case_draft import Bound, CaseDraft, DraftStep


class StepKind:
    """One action. A subclass sets ``action``, ``forbidden`` (keys the action does not take) and
    ``description``, and implements :meth:`parse_target`, :meth:`properties`, :meth:`run` and
    :meth:`label`; the rest has defaults most kinds keep."""

    action: ClassVar[str]
    forbidden: ClassVar[tuple[str, ...]]
    description: ClassVar[str]
    # What the judge and the case model read of a step of this kind.
    calls_target: ClassVar[bool] = False  # the target is called: a contract name the case needs, or a built object
    target_may_be_bound: ClassVar[bool] = False  # the target may be an earlier step's result (a name it refers to)
    pictures_launches: ClassVar[bool] = False  # the report pictures the launches a step of this kind counted
    fills_target: ClassVar[bool] = False  # the step writes its value over its target array (the oracle's copy too)
    # Worker side: the call's last argument is the input it runs on (its address is recorded),
    # and the function's returned op list is listed when lab.yaml says the function binds ops.
    passes_input: ClassVar[bool] = False
    lists_returned_ops: ClassVar[bool] = False

    # ----------------------------------------------------------- parsing (the loader)
    @classmethod
    def parse_target(
        cls, draft: CaseDraft, fields: dict[str, tuple[Node, Node]], node: Node, where: str, step: DraftStep
    ) -> None:
        """Fill in ``step.target`` (and ``on``, ``args`` where the action has its own form)."""
        raise NotImplementedError

    @classmethod
    def properties(cls, common: dict, ident: Callable[[str], dict]) -> tuple[dict, tuple[str, ...]]:
        """This action's JSON Schema properties and required keys; ``common`` holds the shared
        ``as``, ``args`` and ``kwargs``, ``ident(description)`` is the schema of a name."""
        raise NotImplementedError

    @classmethod
    def binding(cls, draft: CaseDraft, step: DraftStep) -> Bound:
        """What the loader knows of the step's ``as`` name before anything runs: by default a
        result, nothing known of it."""
        return draft.result(step)

    @staticmethod
    def need_on(draft: CaseDraft, fields: dict, node: Node, where: str, action: str, also: tuple[str, ...] = ()) -> str:
        """The ``of`` object a method/read/set acts on: an earlier step's name (or one of ``also``)."""
        if "of" not in fields:
            raise draft.reader.fail(node, where, f"a {action} step needs 'of': the object it acts on")
        on = draft.reader.ident(fields["of"][1], f"{where}.of")
        if on not in draft.bound and on not in also:
            raise draft.reader.fail(fields["of"][1], f"{where}.of", f"no earlier step is named {on!r}")
        return on

    # ----------------------------------------------------------- running (the worker: observe only)
    @classmethod
    def run(cls, interp: CaseInterpreter, step: Step, args: list, kwargs: dict) -> Any:
        """Do the step to the submission's objects; what it returns is the step's value."""
        raise NotImplementedError

    @classmethod
    def callee(cls, step: Step) -> str:
        """The object the step acts on: its target, or the ``of`` object of a method/read/set."""
        return step.target

    @classmethod
    def needs_callee(cls, step: Step, interp: CaseInterpreter) -> bool:
        """Whether the callee must be there before the step runs (a missing contract name is
        reported as missing before anything runs)."""
        return cls.callee(step) in interp.contract_names

    @classmethod
    def tracing(cls, step: Step) -> dict | None:
        """The origin tracer's options for this step (:mod:`grader.observe.origins`), None when it
        runs untraced. Steps that read the submission's state or call its methods cost little
        traced; a call, where the ops run, is traced only when a check needs where its values
        came from: following every call would cost a passing submission about a third more
        step time."""
        return None

    @classmethod
    def origin_field(cls, step: Step) -> str | None:
        """The attribute whose origin the step's record names (a read's), else None."""
        return None

    @classmethod
    def retraced(cls, step: Step, steps: tuple[Step, ...]) -> bool:
        """Whether a failed case's re-run (grader.run.relocating) marks this step of the case's
        ``steps`` ``trace_call``, for :meth:`tracing` to trace it deeper: only where it can observe
        something its first run did not (a case none of whose steps is marked is not re-run)."""
        return False

    # ----------------------------------------------------------- describing (pages, repro)
    @classmethod
    def label(cls, step: Step, args: list[str], bind: str) -> str:
        """The step in words: ``args`` are its arguments' labels, ``bind`` its ``NAME = `` or ''."""
        raise NotImplementedError

    @classmethod
    def repro(cls, w: ScriptWriter, step: Step, number: int, label: str) -> None:
        """The step's lines in the repro script: by default run it, then show what it returned and
        cost next to what the grader expects (:meth:`ScriptWriter.shown_step`)."""
        w.shown_step(step, number, label, cls)

    @classmethod
    def repro_statement(cls, w: ScriptWriter, step: Step, given: str) -> tuple[str, str]:
        """The script's statement for the step and the name its result is shown by; ``given``
        is the name the input is bound to ("None": the arguments as they are)."""
        result = w.py_name(step.name) if step.name else "result"
        return f"{result} = {cls.repro_expression(w, step, w.arguments(step, given))}", result

    @classmethod
    def repro_expression(cls, w: ScriptWriter, step: Step, arguments: str) -> str:
        raise NotImplementedError


class _CallsTarget(StepKind):
    """What a build and a call share: they call the step's target by name (a contract class or
    function, or an earlier step's result) and are worded and reproduced alike."""

    @classmethod
    def call_target(cls, interp, step, args, kwargs):
        interp.called = interp.target_object(step.target)  # named if it cannot be called (origins.definition)
        return interp.called(*args, **kwargs)

    @classmethod
    def label(cls, step, args, bind):
        return f"{bind}{step.target}({', '.join(args)})"

    @classmethod
    def repro_expression(cls, w, step, arguments):
        return f"{w.target(step.target)}({arguments})"


class Build(_CallsTarget):
    action, forbidden, description = "build", ("of", "value", "fill"), "construct a contract class"
    calls_target = True

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
            pack_attribute(lab, provided.setup)(**{k: as_python(v.value) for k, v in step.kwargs.items()})
        except ValueError as exc:
            raise draft.reader.fail(fields["kwargs"][1], f"{where}.kwargs", str(exc)) from None

    @classmethod
    def properties(cls, common, ident):
        return {"build": {"enum": list(active_lab().buildable)}, **common}, ("build", "as")

    @classmethod
    def binding(cls, draft, step):
        return draft.built(step)

    @classmethod
    def run(cls, interp, step, args, kwargs):
        if interp.lab.provided_object(step.target) is not None:
            return interp.provided.build(step.target, step.name, kwargs)  # the lab's own object, never the submission's
        return cls.call_target(interp, step, args, kwargs)

    @classmethod
    def needs_callee(cls, step, interp):
        return interp.lab.provided_object(step.target) is None  # a provided object is the lab's, always there

    @classmethod
    def tracing(cls, step):
        # in a failed case's re-run, also which of the constructor's parameters each attribute's
        # value was stored from (grader.observe.stored_values)
        return {"stores": True} if step.trace_call else {}

    @classmethod
    def retraced(cls, step, steps):
        return stores_matter(steps)


class Call(_CallsTarget):
    action, forbidden, description = "call", ("of", "value", "fill"), "call a contract function or a built object"
    calls_target = target_may_be_bound = pictures_launches = passes_input = lists_returned_ops = True

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
    def properties(cls, common, ident):
        functions = " or ".join(active_lab().contract_functions)
        described = f"{functions}, or an earlier step's name" if functions else "an earlier step's name"
        return {"call": {"type": "string", "description": described}, **common}, ("call",)

    @classmethod
    def binding(cls, draft, step):
        return draft.called(step)

    @classmethod
    def run(cls, interp, step, args, kwargs):
        return cls.call_target(interp, step, args, kwargs)

    @classmethod
    def needs_callee(cls, step, interp):
        return True

    @classmethod
    def tracing(cls, step):
        # a runner's call: only when its graphs are observed or its first op's input is judged
        # (then where its graph's record's fields and its first op's input came from); every
        # call in a failed case's re-run (Step.trace_call, grader.run.relocating), which also
        # notes the test that chose its path and where its returned value was made
        if step.trace_call:
            return {"fields": True, "decisions": True, "stores": True}
        return {"fields": True} if step.observe_graphs or step.follow_values else None

    @classmethod
    def retraced(cls, step, steps):
        return True  # the test that chose its path, and the rest grader.observe.origins notes then


class _ActsOnObject(StepKind):
    """What the steps on an earlier step's object share (``of:``): that object is their callee,
    and the worker traces them with the origin tracer's default options; in a failed case's
    re-run, also what their tests compared and where it was stored (grader.observe.stored_values)."""

    @classmethod
    def callee(cls, step):
        return step.on

    @classmethod
    def tracing(cls, step):
        return {"stores": True} if step.trace_call else {}

    @classmethod
    def retraced(cls, step, steps):
        return stores_matter(steps)


class Method(_ActsOnObject):
    action, forbidden, description = "method", ("value", "fill"), "call a method"
    pictures_launches = True

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        step.target = draft.reader.ident(fields["method"][1], f"{where}.method")
        step.on = cls.need_on(draft, fields, node, where, "method", launch_counter())

    @classmethod
    def properties(cls, common, ident):
        return {"method": {"type": "string"}, "of": ident(of_described()), **common}, ("method", "of")

    @classmethod
    def run(cls, interp, step, args, kwargs):
        interp.called = getattr(interp.target_object(step.on), step.target)  # named if it cannot be called
        return interp.called(*args, **kwargs)

    @classmethod
    def label(cls, step, args, bind):
        return f"{bind}{step.on}.{step.target}({', '.join(args)})"

    @classmethod
    def repro_expression(cls, w, step, arguments):
        return f"{w.target(step.on)}.{step.target}({arguments})"


class Read(_ActsOnObject):
    action, forbidden, description = "read", ("args", "kwargs", "value", "fill"), "read an attribute"

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        step.target = draft.reader.ident(fields["read"][1], f"{where}.read")
        step.on = cls.need_on(draft, fields, node, where, "read", launch_counter())

    @classmethod
    def properties(cls, common, ident):
        return {"read": {"type": "string"}, "of": ident(of_described()), "as": common["as"]}, ("read", "of")

    @classmethod
    def run(cls, interp, step, args, kwargs):
        return getattr(interp.target_object(step.on), step.target)

    @classmethod
    def origin_field(cls, step):
        return step.target

    @classmethod
    def label(cls, step, args, bind):
        return f"read {step.on}.{step.target}"

    @classmethod
    def repro_expression(cls, w, step, arguments):
        return f"{w.target(step.on)}.{step.target}"


class Set(_ActsOnObject):
    action, forbidden, description = "set", ("args", "kwargs", "fill"), "write an attribute"

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        step.target = draft.reader.ident(fields["set"][1], f"{where}.set")
        step.on = cls.need_on(draft, fields, node, where, "set")
        if "value" not in fields:
            raise draft.reader.fail(node, where, "a set step needs 'value'")
        step.args = [draft.value(fields["value"][1], f"{where}.value")]

    @classmethod
    def properties(cls, common, ident):
        props = {"set": {"type": "string"}, "of": ident("a built object"), "value": {"$ref": "#/$defs/value"}}
        return {**props, "as": common["as"]}, ("set", "of", "value")

    @classmethod
    def run(cls, interp, step, args, kwargs):
        setattr(interp.target_object(step.on), step.target, args[0])
        return None

    @classmethod
    def label(cls, step, args, bind):
        return f"{step.on}.{step.target} = {', '.join(args)}"

    @classmethod
    def repro_statement(cls, w, step, given):
        return f"{w.target(step.on)}.{step.target} = {w.value(step.args[0])}", "None"


class Mutate(StepKind):
    action, forbidden, description = (
        "mutate",
        ("of", "args", "kwargs", "value", "as"),
        "the caller overwrites a returned array",
    )
    target_may_be_bound = fills_target = True

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
    def properties(cls, common, ident):
        return {"mutate": ident("an earlier call's result"), "fill": {"type": "number"}}, ("mutate", "fill")

    @classmethod
    def run(cls, interp, step, args, kwargs):
        array = interp.target_object(step.target)  # the caller scribbles over a returned array
        array[...] = args[0]
        return None

    @classmethod
    def label(cls, step, args, bind):
        return f"overwrite every element of {step.target} with {', '.join(args)}"

    @classmethod
    def repro(cls, w, step, number, label):
        target, value = w.py_name(step.target), w.value(step.args[0])
        w.lines.append("try:")
        w.lines.append(f"    {target}[...] = {value}  # the caller writes over an array it was given")
        w.lines.append("except Exception as exc:")
        w.lines.append(f"    raised({number}, {w.quoted(label)!r}, exc)")
        w.lines.append("else:")
        w.lines.append(f"    print('step {number}: {w.quoted(label)}')")
        if step.target in w.shadow:
            w.lines.append(f"expected[{step.target!r}][...] = {value}")


class Probe(StepKind):
    """Build a runner the lab lets a probe trace (lab.yaml: ``probe``) from ``args[0]`` (its ops)
    and ``kwargs``, call it with ``args[1]`` (the capture) and ``args[2]`` (the replay: a new
    input of the same shape), under the line tracer (:mod:`grader.observe.line_trace`). What
    each of the submission's lines did is the step's ``trace``; the ``cites`` check judges the
    student's answers with it."""

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
    def properties(cls, common, ident):
        return {"probe": {"enum": list(active_lab().probe)}, **common}, ("probe", "args")

    @classmethod
    def run(cls, interp, step, args, kwargs):
        runner = interp.target_object(step.target)(args[0], **kwargs)  # build, capture, replay under the line tracer
        interp.trace_probe(runner, args[1], args[2])
        return None

    @classmethod
    def label(cls, step, args, bind):
        built = ", ".join(args[:1] + args[3:])
        given = args[1:3] + ["", ""]
        return f"trace {step.target}({built}): capture {given[0]}, replay {given[1]}"

    @classmethod
    def repro(cls, w, step, number, label):
        """The capture and the replay, run plainly. The grader runs the same two calls under a
        line tracer and compares the lines answers.md cites with what each line did."""
        built = ", ".join([w.value(step.args[0])] + [f"{k}={w.value(v)}" for k, v in step.kwargs])
        first, second = w.value(step.args[1]), w.value(step.args[2])
        count = w.launch_count
        w.lines.append("# the grader follows your lines through these two calls to check answers.md's citations")
        w.lines.append("try:")
        w.lines.append(f"    probed = {w.module}.{step.target}({built})")
        w.lines.append(f"    for phase, x in (('capture', {first}), ('replay', {second})):")
        w.lines.append(f"        before = {count}")
        w.lines.append("        probed(x)")
        w.lines.append(f"        print(f'step {number}: {{phase}}: {{{count} - before}} launch(es)')")
        w.lines.append("except Exception as exc:")
        w.lines.append(f"    raised({number}, {w.quoted(label)!r}, exc)")


# The engine's own kinds, which every lab has; a lab's pack may add its own (lab.yaml: steps).
STEP_KINDS: dict[str, type[StepKind]] = {kind.action: kind for kind in (Build, Call, Method, Read, Set, Mutate, Probe)}
_lab_kinds: tuple[Lab, dict[str, type[StepKind]]] | None = None  # the last lab asked for, and its kinds


def lab_step_kinds(lab: Lab) -> dict[str, type[StepKind]]:
    """Every step kind of ``lab``: the engine's, then the ones its pack adds (``lab.yaml: steps``,
    each a ``pack.MODULE:Class`` naming a :class:`StepKind` with an action of its own). A wrong
    one is a :class:`~grader.lab.LabError` of one line, naming the lab file and the entry."""
    global _lab_kinds
    if _lab_kinds is not None and _lab_kinds[0] is lab:  # asked at every step the worker runs
        return _lab_kinds[1]
    kinds = dict(STEP_KINDS)
    for i, ref in enumerate(lab.step_kinds):
        kind = pack_attribute(lab, ref)
        where = f"{lab.root / LAB_FILE}: steps[{i}]: {ref}"
        if not (isinstance(kind, type) and issubclass(kind, StepKind) and isinstance(vars(kind).get("action"), str)):
            raise LabError(f"{where}: not a step kind (a grader.step_kinds.StepKind with an action of its own)")
        if kind.action in kinds:
            raise LabError(f"{where}: a step kind named {kind.action!r} is already there")
        kinds[kind.action] = kind
    _lab_kinds = (lab, kinds)
    return kinds


def changed_arguments(step: Step) -> dict[int, tuple[int, int]]:
    """Per positional parameter of the constructor a build step calls: the int argument the step
    hands it and the value the contract makes of it (lab.yaml: ``at_least``), where the two
    differ (a warm-up of 0 that the lab raises to 1: {0: (0, 1)}); {} for any other step."""
    entry = active_lab().entry_point(step.target) if step.action == "build" else None
    if entry is None:
        return {}
    given, found = dict(step.kwargs), {}
    for position, param in enumerate(entry.params):
        value = step.args[position] if position < len(step.args) else given.get(param)
        raw = value.value if isinstance(value, PlainValue) else None
        due = entry.due(param, raw)
        if due is not None and due != raw:
            found[position] = (raw, due)
    return found


def stores_matter(steps: tuple[Step, ...]) -> bool:
    """Whether where the values a case's tests compared were stored can tell a cause (a re-run's
    ``stored:N``, grader.suite.locating): only where a build hands an argument the contract
    makes another value of."""
    return any(changed_arguments(step) for step in steps)


def step_kind(action: str) -> type[StepKind]:
    """The kind of a step, by its action, among the active lab's."""
    return lab_step_kinds(active_lab())[action]


def step_actions() -> tuple[str, ...]:
    """Every action of the active lab, the engine's first, in the order specs/README.md lists them."""
    return tuple(lab_step_kinds(active_lab()))


def launch_counter() -> tuple[str, ...]:
    """What a method or read step may act on besides an earlier step's object: the lab's launch counter."""
    counter = active_lab().launch_counter
    return (counter,) if counter else ()


def of_described() -> str:
    return ", or ".join(("a built object", *launch_counter()))


def as_python(value: Any) -> Any:
    """A plain value as Python has it: tuples (as the spec model keeps lists) become lists."""
    return [as_python(v) for v in value] if isinstance(value, tuple) else value
