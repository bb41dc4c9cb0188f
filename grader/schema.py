"""The JSON Schema of spec files, built from the loader's own vocabulary.

``specs/schema.json`` is this function's output, committed so editors can
validate and complete spec files; a test keeps the two identical, and checks
that the shipped specs validate against it. The loader stays the authority:
it checks what a schema cannot (that a referenced step exists, that an oracle
is known, that ids are unique).
"""

from __future__ import annotations

from grader.loader import BUILDABLE, STEP_MODES, _KWARG_NAMES
from grader.ops import FLOAT_DTYPES, OP_KINDS
from grader.spec_model import CHECK_KINDS, CONTRACT_FUNCTIONS, SPEC_FORMAT, STEP_ACTIONS, TAGS, VISIBILITIES

SCHEMA_ID = "https://graphgrade.invalid/spec-format-1.schema.json"


def _obj(properties: dict, required: tuple[str, ...] = (), description: str | None = None) -> dict:
    schema: dict = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = list(required)
    if description:
        schema["description"] = description
    return schema


def _ident(description: str) -> dict:
    return {"type": "string", "pattern": "^[A-Za-z0-9_-]+$", "description": description}


def _ops() -> dict:
    plain = [name for name, kind in OP_KINDS.items() if kind.takes is None]
    with_arg = {
        name: ({"type": "integer", "minimum": 0} if kind.takes == "seed" else {"type": "number"})
        for name, kind in OP_KINDS.items()
        if kind.takes is not None
    }
    return {
        "oneOf": [
            {"enum": plain, "description": "an op without argument"},
            *[
                {**_obj({name: {**arg, "description": OP_KINDS[name].doc}}, (name,)), "minProperties": 1, "maxProperties": 1}
                for name, arg in with_arg.items()
            ],
        ]
    }


def build_schema() -> dict:
    plain_value = {"oneOf": [{"type": ["number", "string", "boolean", "null"]}, {"type": "array", "items": {"$ref": "#/$defs/plain"}}]}
    array = _obj(
        {
            "shape": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1},
            "dtype": {"enum": list(FLOAT_DTYPES)},
            "seed": {"type": "integer", "minimum": 0},
            "values": {"type": "array"},
        },
        description="seeded standard-normal input of a shape, or literal values",
    )
    value = {
        "oneOf": [
            {"$ref": "#/$defs/plain"},
            _obj({"array": {"$ref": "#/$defs/array"}}, ("array",)),
            _obj({"ops": {"type": "array", "items": {"$ref": "#/$defs/op"}}}, ("ops",)),
            _obj({"capturable": {"type": "array", "items": {"type": "boolean"}, "minItems": 1}}, ("capturable",)),
            _obj({"ref": _ident("the name of an earlier step")}, ("ref",)),
        ]
    }
    step_common = {
        "as": _ident("binds the step's result for later steps and checks"),
        "args": {"type": "array", "items": {"$ref": "#/$defs/value"}},
        "kwargs": _obj({k: {"$ref": "#/$defs/value"} for k in _KWARG_NAMES}),
    }
    steps = [
        _obj({"build": {"enum": list(BUILDABLE)}, **step_common}, ("build", "as"), "construct a contract class"),
        _obj({"call": {"type": "string", "description": f"{' or '.join(CONTRACT_FUNCTIONS)}, or an earlier step's name"}, **step_common}, ("call",), "call a contract function or a built object"),
        _obj({"method": {"type": "string"}, "of": _ident("a built object, or LaunchCounter"), **step_common}, ("method", "of"), "call a method"),
        _obj({"read": {"type": "string"}, "of": _ident("a built object, or LaunchCounter"), "as": step_common["as"]}, ("read", "of"), "read an attribute"),
        _obj({"set": {"type": "string"}, "of": _ident("a built object"), "value": {"$ref": "#/$defs/value"}, "as": step_common["as"]}, ("set", "of", "value"), "write an attribute"),
        _obj({"mutate": _ident("an earlier call's result"), "fill": {"type": "number"}}, ("mutate", "fill"), "the caller overwrites a returned array"),
    ]
    assert [next(iter(s["required"])) for s in steps] == list(STEP_ACTIONS)
    step_name = _ident("the `as` name of a step")
    after = _ident("read right after this step (default: at the end)")
    checks = {
        "launches": _obj({"step": step_name, "equals": {"type": "integer", "minimum": 0}}, ("step", "equals")),
        "output": _obj({"step": step_name, "oracle": {"type": "boolean"}, "equals": {"$ref": "#/$defs/array"}, "shape": {"type": "array", "items": {"type": "integer", "minimum": 0}}, "dtype": {"enum": list(FLOAT_DTYPES)}}, ("step",)),
        "value": _obj({"step": step_name, "equals": {"$ref": "#/$defs/plain"}}, ("step", "equals")),
        "raises": _obj({"step": step_name, "type": {"type": "string"}}, ("step",)),
        "num_captured": _obj({"of": step_name, "equals": {"type": "integer", "minimum": 0}, "after": after}, ("of", "equals")),
        "num_graphs": _obj({"of": step_name, "equals": {"type": "integer", "minimum": 0}, "after": after}, ("of", "equals")),
        "attribute": _obj({"of": step_name, "name": {"type": "string"}, "equals": {"$ref": "#/$defs/plain"}, "after": after}, ("of", "name", "equals")),
        "step_mode": _obj({"of": step_name, "equals": {"enum": list(STEP_MODES)}, "after": after}, ("of", "equals")),
        "static_buffer": _obj({"of": step_name, "steps": {"type": "array", "items": step_name, "minItems": 2}}, ("of", "steps")),
        "witness": _obj({"of": step_name, "capture": step_name, "replay": step_name, "op": {"type": "integer", "minimum": 0}}, ("of", "capture", "replay")),
        "padded_rows": _obj({"of": step_name, "steps": {"type": "array", "items": step_name, "minItems": 1}, "op": {"type": "integer", "minimum": 0}}, ("of", "steps")),
        "fused_ops": _obj({"step": step_name}, ("step",)),
    }
    assert tuple(checks) == CHECK_KINDS
    case = _obj(
        {
            "id": _ident("stable case id, unique within its spec"),
            "description": {"type": "string", "minLength": 1},
            "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}, "minItems": 1},
            "checks": {"type": "array", "items": {"$ref": "#/$defs/check"}, "minItems": 1},
        },
        ("id", "description", "steps", "checks"),
    )
    spec = _obj(
        {
            "id": _ident("stable spec id, unique across the suite"),
            "title": {"type": "string", "minLength": 1},
            "tag": {"enum": list(TAGS)},
            "points": {"type": "number", "exclusiveMinimum": 0},
            "visibility": {"enum": list(VISIBILITIES)},
            "explanation": {"type": "string", "minLength": 1},
            "hint": {"type": "string", "minLength": 1},
            "cases": {"type": "array", "items": {"$ref": "#/$defs/case"}, "minItems": 1},
        },
        ("id", "title", "tag", "points", "visibility", "explanation", "hint", "cases"),
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "graphgrade spec file",
        "description": "Behaviour specs for the CUDA-graph lab. See specs/README.md.",
        **_obj({"format": {"const": SPEC_FORMAT}, "specs": {"type": "array", "items": {"$ref": "#/$defs/spec"}, "minItems": 1}}, ("format", "specs")),
        "$defs": {
            "plain": plain_value,
            "array": array,
            "op": _ops(),
            "value": value,
            "step": {"oneOf": steps},
            "check": {"oneOf": [{**_obj({k: v}, (k,)), "maxProperties": 1} for k, v in checks.items()]},
            "case": case,
            "spec": spec,
        },
    }
