"""JSON Schema building blocks shared by the step kinds, the check kinds and :mod:`grader.suite.schema`."""

from __future__ import annotations


def schema_object(properties: dict, required: tuple[str, ...] = (), description: str | None = None) -> dict:
    """A JSON Schema object with exactly these properties."""
    schema: dict = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = list(required)
    if description:
        schema["description"] = description
    return schema


def schema_ident(description: str) -> dict:
    """The JSON Schema of a name: letters, digits, - and _."""
    return {"type": "string", "pattern": "^[A-Za-z0-9_-]+$", "description": description}


STEP_NAME = schema_ident("the `as` name of a step")
AFTER = schema_ident("read right after this step (default: at the end)")
COUNT = {"type": "integer", "minimum": 0}
