"""The check kinds' registry: one class per kind, known alike to the loader, the schema, the judge and the docs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.spec_text import HEADER, RUNNER_STEPS

from grader.step_kinds import STEP_KINDS, step_actions
from grader.suite.checks import Check, check_class, lab_check_classes, lab_check_kinds
from grader.suite.checks.base import REGISTRY
from grader.suite.loader import SpecError, load_spec_text
from grader.suite.schema import build_schema

ROOT = Path(__file__).resolve().parents[1]


def test_every_kind_has_its_own_class_with_every_part():
    classes, kinds = lab_check_classes(), lab_check_kinds()  # the default lab's: the engine's and its pack's
    assert len(classes) == len(kinds) == len(set(kinds))
    for cls in classes:
        assert check_class(cls.kind) is cls
        for part in ("parse", "schema", "judge"):
            owner = next(k for k in cls.__mro__ if part in k.__dict__)
            assert owner is not Check, f"{cls.kind}: {part} is the base's"
        assert all(field in cls.__dataclass_fields__ for field in cls.step_fields), cls.kind
        assert cls.__dataclass_params__.frozen, cls.kind


def test_the_schema_lists_exactly_the_registered_kinds_in_order():
    classes, kinds = lab_check_classes(), lab_check_kinds()
    alternatives = build_schema()["$defs"]["check"]["oneOf"]
    assert [next(iter(alt["properties"])) for alt in alternatives] == list(kinds)
    assert [alt["properties"][kind] for alt, kind in zip(alternatives, kinds)] == [c.schema() for c in classes]


def test_the_spec_format_reference_documents_every_kind():
    kinds = lab_check_kinds()
    text = (ROOT / "specs" / "README.md").read_text(encoding="utf-8")
    documented = re.findall(r"^\| `([a-z_]+)` \|", text[text.index("### Checks") :], flags=re.M)
    assert documented[: len(kinds)] == list(kinds), "specs/README.md's table of checks, in the registry's order"


def test_an_unknown_kind_is_refused_naming_every_known_one():
    text = HEADER + RUNNER_STEPS + "        checks:\n          - launchez: {step: first, equals: 3}\n"
    line = text.splitlines().index("          - launchez: {step: first, equals: 3}") + 1
    with pytest.raises(SpecError) as error:
        load_spec_text(text, "s.yaml")
    expected = f"unknown check kind 'launchez' (expected one of: {', '.join(lab_check_kinds())})"
    assert str(error.value) == f"s.yaml:{line}: specs[0].cases[0].checks[0]: {expected}"


def _define(body: dict, name: str = "Probe"):
    namespace = {"__module__": __name__, "__annotations__": {"step": int}, **body}
    return dataclass(frozen=True)(type(name, (Check,), namespace))


def _parse(cls, draft, body, at, line):
    raise NotImplementedError


def _schema(cls):
    return {}


def _judge(self, j):
    pass


COMPLETE = {
    "kind": "probe_kind",
    "order": 999,
    "parse": classmethod(_parse),
    "schema": classmethod(_schema),
    "judge": _judge,
}


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("kind", "sets no 'kind'"),
        ("order", "sets no integer 'order'"),
        ("parse", "does not define parse"),
        ("judge", "does not define judge"),
        ("schema", "does not define schema"),
    ],
)
def test_a_kind_missing_a_part_fails_where_it_is_defined(missing, message):
    before = dict(REGISTRY)
    with pytest.raises(TypeError, match=re.escape(message)):
        _define({k: v for k, v in COMPLETE.items() if k != missing})
    assert REGISTRY == before, "a refused kind must not be registered"


def test_a_kind_defined_twice_fails_naming_both_modules():
    before = dict(REGISTRY)
    with pytest.raises(TypeError, match=r"check kind 'value' is defined twice: grader\.suite\.checks\.value and "):
        _define({**COMPLETE, "kind": "value"})
    assert REGISTRY == before


def test_steps_are_registered_the_same_way_and_the_schema_follows():
    assert tuple(STEP_KINDS) == step_actions() == ("build", "call", "method", "read", "set", "mutate", "probe")
    alternatives = build_schema()["$defs"]["step"]["oneOf"]
    assert [alt["required"][0] for alt in alternatives] == list(step_actions())


EVERY_STEP_KIND = (
    HEADER
    + """\
          - build: GraphRunner
            as: runner
            args: [{ops: [relu]}]
          - call: runner
            as: out
            args: [{array: {shape: [2, 3], seed: 1}}]
          - method: reset
            of: LaunchCounter
          - read: graphs
            of: runner
            as: table
          - set: ops
            of: runner
            value: {ops: [tanh]}
          - mutate: out
            fill: 0.0
          - probe: GraphRunner
            as: probed
            args: [{ops: [relu]}, {array: {shape: [2, 3], seed: 1}}, {array: {shape: [2, 3], seed: 2}}]
        checks:
          - launches: {step: out, equals: 1}
"""
)


def test_the_interpreter_performs_every_step_kind():
    import reference.cudagraph as reference
    from grader.observe.interpreter import observe_in_process

    oracles: dict = {}
    case = load_spec_text(EVERY_STEP_KIND, "s.yaml", oracles).specs[0].cases[0]
    assert {s.action for s in case.steps} == set(step_actions())
    observation = observe_in_process(reference, case.uid, case.steps)
    assert [(s.action, o.outcome) for s, o in zip(case.steps, observation.steps)] == [
        (a, "returned") for a in step_actions()
    ]
