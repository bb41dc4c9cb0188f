"""Typed, frozen model of spec files: spec file -> spec -> case -> steps + checks.

A case has two halves that never travel together:

* ``steps`` (what to do: build a target, call it, read an attribute) go to the
  untrusted worker, which records what happened;
* ``checks`` (what should have happened) stay in the grader's process, where
  the judge compares them with the worker's observations.

See ``specs/README.md`` for the YAML form of everything here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from grader.lab import active as active_lab
from grader.step_kinds import step_kind
from grader.values import ArrayValue as ArrayValue
from grader.values import MaskValue as MaskValue
from grader.values import OpSpec as OpSpec
from grader.values import OpsValue as OpsValue
from grader.values import PlainValue as PlainValue
from grader.values import RefValue as RefValue
from grader.values import Value as Value

if TYPE_CHECKING:  # the check kinds import this module; a case only holds them
    from grader.suite.checks.base import Check

SPEC_FORMAT = 1

# A spec's behaviour tag, the core/stretch split and the student contract's names are the lab's
# (grader.lab: its lab.yaml's behaviours and student.entry_points), asked for when needed.
# Where a spec's rule comes from (docs/contract.md, "Where each rule comes from"): the students'
# handout, or graphgrade's stricter reading where the handout is silent. A stricter reading of a
# core part is counted outside the core points: a build that does what the handout says keeps
# every core point.
READINGS: tuple[str, ...] = ("handout", "graphgrade")


def point_group(tag: str, reading: str = "handout") -> str:
    """``core`` (a core tag of the lab, the handout's rule), ``stricter`` (graphgrade's stricter
    reading of a core part, counted outside the core), ``answers`` (a tag of the lab's ``answers``
    part: the notebook answers the handout's definition of done asks for, not a build step, and
    not optional either) or ``stretch`` (a stretch tag, whatever its reading)."""
    lab = active_lab()
    if tag in lab.core_tags:
        return "core" if reading == "handout" else "stricter"
    return "answers" if lab.part_of(tag) == "answers" else "stretch"


VISIBILITIES: tuple[str, ...] = ("visible", "hidden", "after_due_date", "after_published")
# How a case's points are earned (a spec's ``scoring:``): all or nothing ("whole-case", the default),
# or split evenly over the case's checks, each passed check earning its share ("per-check").
SCORINGS: tuple[str, ...] = ("whole-case", "per-check")


def contract_names() -> tuple[str, ...]:
    """The names of the student contract a step may use: the lab's entry points."""
    return active_lab().contract_names


# ---------------------------------------------------------------- values: grader.values (re-exported here)


# ---------------------------------------------------------------- steps
@dataclass(frozen=True)
class Step:
    """One action of a case, run by the worker against the submission.

    ``action``: a step kind of :mod:`grader.step_kinds` (build, call, method, read, set,
    mutate, probe, and any a lab's pack registers). ``target`` is a
    contract name, a bound name, a method or attribute name. ``on`` names the
    object a method/read/set acts on. ``name`` binds the result for later steps
    and for checks. ``implicit`` marks reads the loader added for a check.
    """

    index: int
    action: str
    target: str
    on: str | None = None
    name: str | None = None
    args: tuple[Value, ...] = ()
    kwargs: tuple[tuple[str, Value], ...] = ()
    observe_graphs: bool = False
    follow_values: bool = False  # a runner's call whose first op's input a check judges: trace where it came from
    # a failed case's re-run (grader.run.relocating): this step is traced deeper (a call's decision
    # noted; what a build's, a method's or a read's tests compared: grader.step_kinds tracing)
    trace_call: bool = False
    implicit: bool = False
    line: int = 0

    @cached_property  # spec data: the same text for every submission graded
    def label(self) -> str:
        """The step in words, as its kind words it (:mod:`grader.step_kinds`)."""
        args = [v.label for v in self.args] + [f"{k}={v.label}" for k, v in self.kwargs]
        bind = f"{self.name} = " if self.name and not self.implicit else ""
        return step_kind(self.action).label(self, args, bind)


# ---------------------------------------------------------------- cases and specs
@dataclass(frozen=True)
class Case:
    spec: str
    id: str
    description: str
    steps: tuple[Step, ...]
    checks: tuple[Check, ...]
    file: str = ""
    line: int = 0

    @property
    def uid(self) -> str:
        return f"{self.spec}/{self.id}"

    @property
    def needs(self) -> tuple[str, ...]:
        """Contract names this case uses (a submission lacking one fails only such cases)."""
        names: list[str] = []
        contract = contract_names()
        for step in self.steps:
            for name in (step.target if step_kind(step.action).calls_target else None, step.on):
                if name in contract and name not in names:
                    names.append(name)
        return tuple(names)


# A case's failure is named by the kind of the check that failed first, or, when a step could not
# run as the spec needs, by the step's own cause: these.
OWN_CAUSES = ("raised", "not-written", "missing", "not-run")


@dataclass(frozen=True)
class Spec:
    id: str
    title: str
    tag: str
    points: float
    visibility: str
    explanation: str
    hint: str
    cases: tuple[Case, ...]
    file: str = ""
    line: int = 0
    reading: str = "handout"  # READINGS: the handout's rule, or graphgrade's stricter reading
    cause_hints: tuple[tuple[str, str], ...] = ()  # ``hints:``: (cause, hint) for a case failing of that cause
    scoring: str = "whole-case"  # SCORINGS: all of a case's points or none, or a share per passed check

    @property
    def group(self) -> str:
        """Where the spec's points count: ``core``, ``stricter``, ``answers`` or ``stretch`` (:func:`point_group`)."""
        return point_group(self.tag, self.reading)


@dataclass(frozen=True)
class SpecFile:
    path: str
    format: int
    specs: tuple[Spec, ...]


@dataclass(frozen=True)
class Suite:
    files: tuple[SpecFile, ...]

    @property
    def specs(self) -> tuple[Spec, ...]:
        return tuple(s for f in self.files for s in f.specs)

    @property
    def cases(self) -> tuple[Case, ...]:
        return tuple(c for s in self.specs for c in s.cases)

    def only_visible(self) -> Suite:
        return Suite(
            tuple(
                SpecFile(f.path, f.format, tuple(s for s in f.specs if s.visibility == "visible")) for f in self.files
            )
        )
