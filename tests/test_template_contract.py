"""The student template must offer exactly the reference's contract, as stubs.

Students start from ``student_template/cudagraph.py``; the grader imports the
names and calls them with the reference's signatures. Any drift between the
two (a renamed parameter, a changed default, a method turned into a property)
would fail students for the template's mistake, so it fails here first.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import reference
from reference import cudagraph as ref
from student_template import cudagraph as tpl

ROOT = Path(__file__).resolve().parents[1]

# Arguments for calling a stub, by parameter name.
DUMMY_ARGS: dict[str, Any] = {
    "ops": [],
    "x": np.zeros((2, 3)),
    "is_capturable": lambda i: True,
    "capture_sizes": [1, 2, 4, 8],
    "warmup_steps": 1,
    "enabled": True,
    "k": 1,
    "graph_id": 1,
    "batch_size": 2,
    "seq_step": 0,
}

DATA_CLASSES = ("GraphEntry", "StepMode")  # given to students, not stubs


def parameters(fn: Callable[..., Any]) -> list[tuple[str, Any, Any]]:
    """Name, kind and default of every parameter: what a caller depends on."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def public_members(cls: type) -> dict[str, Any]:
    """The members a class defines itself that callers may use."""
    return {
        name: member
        for name, member in vars(cls).items()
        if not name.startswith("_") or name in ("__init__", "__call__")
    }


def member_kind(member: Any) -> str:
    for kind in (classmethod, staticmethod, property):
        if isinstance(member, kind):
            return kind.__name__
    return "function" if inspect.isfunction(member) else "attribute"


def underlying(member: Any) -> Callable[..., Any]:
    if isinstance(member, (classmethod, staticmethod)):
        return member.__func__
    if isinstance(member, property):
        assert member.fget is not None
        return member.fget
    return member


def contract_classes() -> list[str]:
    return [name for name in reference.CONTRACT_NAMES if inspect.isclass(getattr(ref, name))]


def stub_calls() -> list[tuple[str, Callable[[], Any]]]:
    """One zero-argument call per stub in the template."""
    calls: list[tuple[str, Callable[[], Any]]] = []

    def call(fn: Callable[..., Any], *lead: Any) -> Callable[[], Any]:
        names = [p for p in inspect.signature(fn).parameters][len(lead) :]
        return lambda: fn(*lead, **{name: DUMMY_ARGS[name] for name in names})

    for name in reference.CONTRACT_NAMES:
        obj = getattr(tpl, name)
        if inspect.isfunction(obj):
            calls.append((name, call(obj)))
        elif name not in DATA_CLASSES:
            bare = object.__new__(obj)
            for member_name, member in public_members(obj).items():
                kind = member_kind(member)
                label = f"{name}.{member_name}"
                if kind == "classmethod":
                    calls.append((label, call(getattr(obj, member_name))))
                elif kind in ("function", "property"):
                    calls.append((label, call(underlying(member), bare)))
    return calls


class TestReferencePackage:
    def test_contract_names_are_the_design_table(self) -> None:
        assert isinstance(reference.CONTRACT_NAMES, tuple)
        assert set(reference.CONTRACT_NAMES) == {
            "LaunchCounter",
            "run_eager",
            "GraphEntry",
            "GraphRunner",
            "PiecewiseGraphRunner",
            "fuse_elementwise",
            "StepMode",
            "InferenceGraphCapture",
        }

    @pytest.mark.parametrize("name", reference.CONTRACT_NAMES)
    def test_top_level_names_are_the_module_objects(self, name: str) -> None:
        assert getattr(reference, name) is getattr(ref, name)

    def test_importing_reference_stays_light(self) -> None:
        code = "import sys, reference; sys.exit('cupy' in sys.modules)"
        result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False)
        assert result.returncode == 0


class TestTemplateSignatures:
    @pytest.mark.parametrize("name", reference.CONTRACT_NAMES)
    def test_every_contract_name_exists(self, name: str) -> None:
        assert hasattr(tpl, name), f"student_template/cudagraph.py lacks {name}"
        assert inspect.isclass(getattr(tpl, name)) == inspect.isclass(getattr(ref, name))

    @pytest.mark.parametrize("name", [n for n in reference.CONTRACT_NAMES if inspect.isfunction(getattr(ref, n))])
    def test_function_signatures_match(self, name: str) -> None:
        assert parameters(getattr(tpl, name)) == parameters(getattr(ref, name))

    @pytest.mark.parametrize("name", contract_classes())
    def test_class_init_signatures_match(self, name: str) -> None:
        assert parameters(getattr(tpl, name).__init__) == parameters(getattr(ref, name).__init__)

    @pytest.mark.parametrize("name", [n for n in contract_classes() if n not in DATA_CLASSES])
    def test_class_members_match(self, name: str) -> None:
        ref_members = public_members(getattr(ref, name))
        tpl_members = public_members(getattr(tpl, name))
        assert sorted(tpl_members) == sorted(ref_members)
        for member_name, ref_member in ref_members.items():
            tpl_member = tpl_members[member_name]
            assert member_kind(tpl_member) == member_kind(ref_member), member_name
            if member_kind(ref_member) == "attribute":
                assert tpl_member == ref_member, member_name
            else:
                assert parameters(underlying(tpl_member)) == parameters(underlying(ref_member)), member_name

    @pytest.mark.parametrize(
        "cls_name, prop",
        [
            ("InferenceGraphCapture", "step_count"),
            ("InferenceGraphCapture", "is_captured"),
            ("GraphRunner", "num_captured"),
            ("PiecewiseGraphRunner", "num_graphs"),
        ],
    )
    def test_read_only_properties(self, cls_name: str, prop: str) -> None:
        for module in (ref, tpl):
            member = vars(getattr(module, cls_name))[prop]
            assert isinstance(member, property)
            assert member.fset is None

    def test_launch_counter_starts_at_zero(self) -> None:
        assert tpl.LaunchCounter.n == 0

    def test_graph_entry_has_the_same_fields(self) -> None:
        def fields(cls: type) -> list[str]:
            return [f.name for f in dataclasses.fields(cls)]

        assert fields(tpl.GraphEntry) == fields(ref.GraphEntry)

    def test_step_mode_has_the_same_members(self) -> None:
        assert issubclass(tpl.StepMode, enum.Enum)
        assert [m.name for m in tpl.StepMode] == [m.name for m in ref.StepMode]


class TestTemplateStubs:
    def test_every_stub_is_covered(self) -> None:
        labels = {label for label, _ in stub_calls()}
        assert {"run_eager", "fuse_elementwise", "LaunchCounter.bump"} <= labels
        assert "InferenceGraphCapture.check_static_shape" in labels
        assert "GraphRunner.__call__" in labels

    @pytest.mark.parametrize("label, call", stub_calls(), ids=[label for label, _ in stub_calls()])
    def test_stub_raises_not_implemented(self, label: str, call: Callable[[], Any]) -> None:
        with pytest.raises(NotImplementedError):
            call()
