"""Checks on a built object's state, read by the worker right after a step (or at the end):
``attribute`` and ``step_mode`` (a lab's pack may add reads of its own objects' members on
:class:`StateRead`, as the CUDA-graph lab's ``num_captured`` and ``num_graphs``).

Each adds an implicit read (or a ``step_mode()`` call) to the case and compares what it
returned, as a :class:`~grader.suite.checks.value.ValueCheck` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from grader.lab import active as active_lab
from grader.suite.checks.value import ValueCheck
from grader.suite.schema_parts import AFTER, COUNT, STEP_NAME, schema_object
from grader.suite.spec_reading import read_plain


@dataclass(frozen=True)
class StateRead(ValueCheck):
    """Shared parsing: ``of`` (a built object), ``equals``, optional ``after`` (a step name)."""

    abstract: ClassVar[bool] = True
    extra_keys: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def parse(cls, draft, body, at, line):
        reader = draft.reader
        fields = reader.mapping(body, at, ("of", "equals", "after") + cls.extra_keys, ("of", "equals") + cls.extra_keys)
        of = reader.ident(fields["of"][1], f"{at}.of")
        if of not in draft.bound or draft.bound[of].kind not in ("runner", "machine", "result"):
            raise reader.fail(
                fields["of"][1], f"{at}.of", f"expected the name of a built object or a step's result, got {of!r}"
            )
        equals, action, target, enum = cls.expectation(draft, fields, at)
        read = draft.read_after(fields["after"][1] if "after" in fields else None, at, action, target, of)
        what = f"{of}.step_mode()" if enum else f"{of}.{target}"
        return cls(read.key, equals, what, enum, line)

    @classmethod
    def expectation(cls, draft, fields, at) -> tuple[object, str, str, bool]:
        """(expected value, the worker's action, its target, whether the value is an enum member)."""
        return draft.reader.integer(fields["equals"][1], f"{at}.equals", 0), "read", cls.kind, False

    @classmethod
    def schema(cls):
        return schema_object({"of": STEP_NAME, "equals": COUNT, "after": AFTER}, ("of", "equals"))


@dataclass(frozen=True)
class AttributeCheck(StateRead):
    kind = "attribute"
    order = 70
    extra_keys = ("name",)

    @classmethod
    def expectation(cls, draft, fields, at):
        name = draft.reader.ident(fields["name"][1], f"{at}.name")
        return read_plain(draft.reader, fields["equals"][1], f"{at}.equals"), "read", name, False

    @classmethod
    def schema(cls):
        return schema_object(
            {"of": STEP_NAME, "name": {"type": "string"}, "equals": {"$ref": "#/$defs/plain"}, "after": AFTER},
            ("of", "name", "equals"),
        )


@dataclass(frozen=True)
class StepModeCheck(StateRead):
    kind = "step_mode"
    order = 80

    @classmethod
    def expectation(cls, draft, fields, at):
        return (
            draft.reader.choice(fields["equals"][1], f"{at}.equals", active_lab().step_modes, "step mode"),
            "method",
            "step_mode",
            True,
        )

    @classmethod
    def schema(cls):
        return schema_object(
            {"of": STEP_NAME, "equals": {"enum": list(active_lab().step_modes)}, "after": AFTER}, ("of", "equals")
        )
