"""The JSON Schema of spec files, built from the loader's own vocabulary (the step and check kinds' registries).

``specs/schema.json`` is this function's output, committed so editors can
validate and complete spec files; a test keeps the two identical, and checks
that the shipped specs validate against it. The loader stays the authority:
it checks what a schema cannot (that a referenced step exists, that an oracle
is known, that ids are unique).
"""

from __future__ import annotations

from grader.arrays import FLOAT_DTYPES
from grader.lab import active as active_lab
from grader.lab import op_vocabulary
from grader.spec_model import OWN_CAUSES, READINGS, SCORINGS, SPEC_FORMAT, VISIBILITIES
from grader.suite.checks import check_class, lab_check_kinds
from grader.suite.schema_parts import schema_ident, schema_object
from grader.suite.steps import steps_schema

SCHEMA_ID = "https://graphgrade.invalid/spec-format-1.schema.json"


def _ops() -> dict:
    """An op of the lab's vocabulary."""
    kinds = op_vocabulary().kinds
    plain = [name for name, kind in kinds.items() if kind.takes is None]
    with_arg = {
        name: ({"type": "integer", "minimum": 0} if kind.takes == "seed" else {"type": "number"})
        for name, kind in kinds.items()
        if kind.takes is not None
    }
    return {
        "oneOf": [
            {"enum": plain, "description": "an op without argument"},
            *[
                {
                    **schema_object({name: {**arg, "description": kinds[name].doc}}, (name,)),
                    "minProperties": 1,
                    "maxProperties": 1,
                }
                for name, arg in with_arg.items()
            ],
        ]
    }


def build_schema() -> dict:
    plain_value = {
        "oneOf": [
            {"type": ["number", "string", "boolean", "null"]},
            {"type": "array", "items": {"$ref": "#/$defs/plain"}},
        ]
    }
    array = schema_object(
        {
            "shape": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1},
            "dtype": {"enum": list(FLOAT_DTYPES)},
            "seed": {"type": "integer", "minimum": 0},
            "values": {"type": "array"},
        },
        description="seeded standard-normal input of a shape, or literal values",
    )
    lab = active_lab()
    kinds = {
        "plain": {"$ref": "#/$defs/plain"},
        "array": schema_object({"array": {"$ref": "#/$defs/array"}}, ("array",)),
        "ops": schema_object({"ops": {"type": "array", "items": {"$ref": "#/$defs/op"}}}, ("ops",)),
        "capturable": schema_object(
            {"capturable": {"type": "array", "items": {"type": "boolean"}, "minItems": 1}}, ("capturable",)
        ),
        "ref": schema_object({"ref": schema_ident("the name of an earlier step")}, ("ref",)),
    }
    value = {"oneOf": [kinds[k] for k in lab.values]}
    case = schema_object(
        {
            "id": schema_ident("stable case id, unique within its spec"),
            "description": {"type": "string", "minLength": 1},
            "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}, "minItems": 1},
            "checks": {"type": "array", "items": {"$ref": "#/$defs/check"}, "minItems": 1},
        },
        ("id", "description", "steps", "checks"),
    )
    spec = schema_object(
        {
            "id": schema_ident("stable spec id, unique across the suite"),
            "title": {"type": "string", "minLength": 1},
            "tag": {"enum": list(active_lab().tags)},
            "points": {"type": "number", "exclusiveMinimum": 0},
            "visibility": {"enum": list(VISIBILITIES)},
            "explanation": {"type": "string", "minLength": 1},
            "hint": {"type": "string", "minLength": 1},
            "hints": {
                "type": "object",
                "propertyNames": {"enum": [*lab_check_kinds(), *OWN_CAUSES]},
                "additionalProperties": {"type": "string", "minLength": 1},
                "description": "a hint per cause of failure (a check kind, or raised, not-written, missing, not-run):"
                " a visible case that fails for that cause shows it instead of the spec's hint",
            },
            "cases": {"type": "array", "items": {"$ref": "#/$defs/case"}, "minItems": 1},
            "reading": {
                "enum": list(READINGS),
                "default": "handout",
                "description": "where the spec's rule comes from: the students' handout, or graphgrade's stricter"
                " reading where the handout is silent (a core tag's stricter reading counts outside the core points)",
            },
            "scoring": {
                "enum": list(SCORINGS),
                "default": "whole-case",
                "description": "how a case's points are earned: all or nothing (whole-case), or split evenly over"
                " the case's checks, each passed check earning its share (per-check; a visible spec only)",
            },
        },
        ("id", "title", "tag", "points", "visibility", "explanation", "hint", "cases"),
    )
    spec["if"] = {"properties": {"scoring": {"const": "per-check"}}, "required": ["scoring"]}
    spec["then"] = {"properties": {"visibility": {"const": "visible"}}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "graphgrade spec file",
        "description": f"Behaviour specs of the lab {lab.id!r} ({lab.title}). See specs/README.md.",
        **schema_object(
            {
                "format": {"const": SPEC_FORMAT},
                "specs": {"type": "array", "items": {"$ref": "#/$defs/spec"}, "minItems": 1},
            },
            ("format", "specs"),
        ),
        "$defs": {
            "plain": plain_value,
            "array": array,
            **({"op": _ops()} if op_vocabulary() is not None else {}),  # a lab with ops: its vocabulary
            "value": value,
            "step": {"oneOf": steps_schema()},
            "check": {
                "oneOf": [
                    {**schema_object({c.kind: c.schema()}, (c.kind,)), "maxProperties": 1}
                    for c in map(check_class, lab_check_kinds())
                ]
            },
            "case": case,
            "spec": spec,
        },
    }
