"""Reading a case's steps: each step's YAML by its kind, and the JSON Schema of a step.

A step kind (its keys, its target's checks, its schema, what it does in the worker and how it
is described) lives in one place, the registry of :mod:`grader.step_kinds`; this module reads
a step's common keys (``as``, ``args``, ``kwargs``) and asks the step's kind for the rest.
"""

from __future__ import annotations

from yaml.nodes import Node

from grader.lab import active as active_lab
from grader.step_kinds import lab_step_kinds, step_actions
from grader.suite.case_draft import CaseDraft, DraftStep
from grader.suite.schema_parts import schema_ident, schema_object
from grader.suite.spec_reading import read_value

# What a build step may construct, the functions a call step may call and the keyword names a
# step may pass are the lab's (grader.lab: lab.yaml's entry points, provided objects and kwargs).
STEP_KEYS = ("as", "of", "args", "kwargs", "value", "fill")  # besides the action key itself


def parse_step(draft: CaseDraft, node: Node, where: str, position: int) -> DraftStep:
    """Read one of the file's steps (its action key decides its kind) and bind its ``as`` name."""
    reader = draft.reader
    every = step_actions()
    fields = reader.mapping(node, where, every + STEP_KEYS)
    actions = [a for a in every if a in fields]
    if len(actions) != 1:
        raise reader.fail(node, where, f"a step has exactly one action key: {', '.join(every)}")
    kind = lab_step_kinds(active_lab())[actions[0]]
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
    alternatives = []
    for kind in lab_step_kinds(active_lab()).values():
        properties, required = kind.properties(common, schema_ident)
        alternatives.append(schema_object(properties, required, kind.description))
    return alternatives
