"""The lab as a pack: what the engine knows of a lab, all of it read from the lab's ``lab.yaml``.

The engine (``grader/`` outside this package's data, and ``reports/``) names no lab. Every name
that belongs to one lab (its behaviour tags, the student's module and entry points, the keyword
names its steps pass, the objects it hands to student code, its own check kinds, its step-mode
members, where its specs, reference, mutants and template lie) is a field of :class:`Lab`, which
:mod:`grader.lab.loading` builds from the lab's folder. See docs/labs.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

LAB_FORMAT = 1
# core: the lab's required code; stretch: beyond it; answers: what the handout asks students to
# answer in words and cited lines (no build step, not optional either).
PARTS: tuple[str, ...] = ("core", "stretch", "answers")
ENTRY_KINDS: tuple[str, ...] = ("class", "enum", "function")
# What the spec loader knows statically of what a step of an entry point binds (``binds``):
# runner: a buildable class built from the op list ``ops`` (keyed by its ``capture_sizes``), whose
# calls return its ops run on their input; ops: a function returning an op list made from ``ops``
# (the worker lists the list it returns); result: a function returning ``ops`` run on ``x``.
BINDS: tuple[str, ...] = ("runner", "ops", "result")
# The value kinds a step's argument may hold. plain, ref, array (grader.arrays) and capturable (a
# mask) are the engine's own; ops need the lab's op vocabulary (lab.yaml: ops, grader.lab.vocabulary).
VALUE_KINDS: tuple[str, ...] = ("plain", "ref", "array", "ops", "capturable")
# What a field of a snapshot's entry holds (lab.yaml: snapshot.fields; see Snapshot): a shape (a
# tuple of ints), an int, an array (copied), or a buffer (an array copied, with the identity of
# its object and its data address, so that a check can tell one buffer from a fresh one).
SNAPSHOT_KINDS: tuple[str, ...] = ("shape", "int", "array", "buffer")
SNAPSHOT_RECORD_KEYS: tuple[str, ...] = ("key", "entry_id")  # every entry's own: never a field's name
MAX_SNAPSHOT_FIELDS = 8


@dataclass(frozen=True)
class Behaviour:
    """One behaviour tag: a spec carries exactly one. ``points``: the sum of its specs' points
    (None: not declared, the specs decide)."""

    id: str
    title: str
    part: Literal["core", "stretch", "answers"]
    points: float | None = None


@dataclass(frozen=True)
class EntryPoint:
    """A name the student's module must define: a class (``buildable``: a ``build:`` step may
    construct it), an enum, or a function (a ``call:`` step may call it)."""

    name: str
    kind: Literal["class", "enum", "function"]
    buildable: bool = False
    members: tuple[str, ...] = ()
    binds: Literal["runner", "ops", "result"] | None = None  # see BINDS
    params: tuple[str, ...] = ()  # its positional parameters' names, in order (where a step's args are)
    # the handout's floor on an int argument (lab.yaml: at_least): ``warmup_steps`` below 1 is raised to 1
    at_least: tuple[tuple[str, int], ...] = ()

    def position(self, param: str) -> int | None:
        """Where ``param`` is among the positional parameters (None: not one of them)."""
        return self.params.index(param) if param in self.params else None

    def due(self, param: str, given: object) -> int | None:
        """What the contract makes of the int argument ``given`` for ``param``, where the lab
        declares a floor for it (``at_least``); None where it declares none (or ``given`` is no int)."""
        floor = dict(self.at_least).get(param)
        return max(floor, given) if floor is not None and type(given) is int else None


@dataclass(frozen=True)
class ProvidedObject:
    """An object the grader builds from the pack's own code and hands to student code (a spec's
    ``build: NAME``), never looked up in the submission. Each reference is ``module:attribute``
    inside the pack's ``pack/`` folder: ``factory(setup(**kwargs), log)``, ``log`` a fresh
    ``log()`` per built object, held by the worker, which sends each step's cut of it."""

    name: str
    factory: str
    setup: str
    log: str
    kwargs: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class OwnCheck:
    """A check kind the pack defines. ``parse`` (``module:attribute``) turns the check's keys
    (besides ``of`` and ``during``) into what it accepts, raising ``ValueError`` on a bad one;
    ``judge`` compares that with what a provided object's log recorded during a step, returning
    an object with ``passed``, ``claim``, ``expected`` and ``actual``. ``observes``: the provided
    object whose log it reads."""

    kind: str
    parse: str
    judge: str
    observes: str
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class SnapshotField:
    """One field of a snapshot's entry: the entry's attribute of that name, read as ``kind``."""

    name: str
    kind: Literal["shape", "int", "array", "buffer"]

    @cached_property
    def wire_keys(self) -> tuple[str, ...]:
        """The keys of an entry's record this field fills (a buffer's identity and address beside it)."""
        if self.kind == "buffer":
            return (self.name, f"{self.name}_id", f"{self.name}_address")
        return (self.name,)


@dataclass(frozen=True)
class Snapshot:
    """What a step that observes its object (a spec step's ``observe_graphs``, set by the checks
    that need it) records of it right after the step: each entry of the object's mapping attribute
    ``of`` (key -> entry, at most ``grader.snapshots.MAX_GRAPHS``), as its key's text, the
    entry's identity and the declared ``fields`` of the entry, each read as its kind
    (``SNAPSHOT_KINDS``). The engine bounds and validates every entry by these declarations alone."""

    of: str
    fields: tuple[SnapshotField, ...]

    @cached_property
    def wire_keys(self) -> frozenset[str]:
        """Every key an entry's record may hold."""
        return frozenset(SNAPSHOT_RECORD_KEYS).union(*(f.wire_keys for f in self.fields))


@dataclass(frozen=True)
class LabPaths:
    """Where the lab's files are (absolute)."""

    specs: Path
    reference: Path
    mutants: Path | None
    mutants_import_root: Path | None  # the trusted folder a mutant imports its helpers from
    template: Path | None
    template_files: tuple[Path, ...]
    contract: Path | None
    pack: Path | None


@dataclass(frozen=True)
class Lab:
    """One lab, as its ``lab.yaml`` declares it (see the module doc)."""

    id: str
    title: str
    root: Path  # the folder holding lab.yaml
    module: str  # the student's module: a submission is MODULE.py, or a folder holding it
    handout_path: str | None  # where the handout puts the module inside a repository, if anywhere
    entry_points: tuple[EntryPoint, ...]
    behaviours: tuple[Behaviour, ...]
    kwargs: tuple[str, ...]
    values: tuple[str, ...]
    shared_checks: tuple[str, ...] | None  # None: every check kind the engine has
    own_checks: tuple[OwnCheck, ...]
    provided: tuple[ProvidedObject, ...]
    step_modes: tuple[str, ...]
    launch_counter: str | None  # the entry point whose class-level ``n`` counts launches
    backends: str | None  # pack.MODULE:load_backend, when the reference runs on several backends
    ops: str | None  # pack.MODULE: the lab's op vocabulary (grader.lab.vocabulary), None: the lab has no ops
    paths: LabPaths
    report_title: str = ""  # the line above every page's heading (``report.title``; default: the lab's title)
    all_pass_text: str = ""  # a report's sentence when every case passes (``report.all_pass``)
    points: tuple[tuple[str, float], ...] = ()  # declared totals: (total|core|stricter|stretch, points)
    # pack.MODULE references: the pack's modules defining check kinds as the engine's own are
    # written (Check subclasses, ``lab_owned``), each judged by the engine like one of its own
    check_modules: tuple[str, ...] = ()
    probe: tuple[str, ...] = ()  # the runners (binds: runner) a probe step may trace line by line
    # the notebook answers' slots (lab.yaml: answers): answered by citing lines of the student's
    # code (a ``cites`` check judges each), and answered in words (shown, never scored)
    cited_slots: tuple[str, ...] = ()
    free_slots: tuple[str, ...] = ()
    # pack.MODULE:Class references (lab.yaml: steps): step kinds the pack adds to the engine's,
    # each a grader.step_kinds.StepKind (its parsing, its running in the worker, its wording)
    step_kinds: tuple[str, ...] = ()
    snapshot: Snapshot | None = None  # what a step that observes its object records (None: nothing)

    # ------------------------------------------------------------ derived names (a Lab never changes)
    @cached_property
    def module_file(self) -> str:
        return f"{self.module}.py"

    @cached_property
    def tags(self) -> tuple[str, ...]:
        return tuple(b.id for b in self.behaviours)

    @cached_property
    def core_tags(self) -> tuple[str, ...]:
        return tuple(b.id for b in self.behaviours if b.part == "core")

    @cached_property
    def contract_names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entry_points)

    @cached_property
    def contract_functions(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entry_points if e.kind == "function")

    @cached_property
    def buildable(self) -> tuple[str, ...]:
        """What a ``build:`` step may name: the buildable entry points, then the provided objects."""
        return tuple(e.name for e in self.entry_points if e.buildable) + tuple(p.name for p in self.provided)

    @cached_property
    def kwarg_names(self) -> tuple[str, ...]:
        """Every keyword name a step may pass: the lab's, then each provided object's own."""
        names = list(self.kwargs)
        for provided in self.provided:
            names.extend(k for k in provided.kwargs if k not in names)
        return tuple(names)

    @cached_property
    def step_mode_enum(self) -> str | None:
        """The enum entry point whose members are the step modes (the ``step_mode`` check's type)."""
        modes = set(self.step_modes)
        return next((e.name for e in self.entry_points if e.kind == "enum" and modes <= set(e.members)), None)

    def entry_point(self, name: str) -> EntryPoint | None:
        return next((e for e in self.entry_points if e.name == name), None)

    def binding(self, name: str) -> str | None:
        """What a step of the entry point ``name`` binds (``BINDS``), None for any other name."""
        entry = self.entry_point(name)
        return entry.binds if entry is not None else None

    @cached_property
    def answer_slots(self) -> tuple[str, ...]:
        return self.cited_slots + self.free_slots

    def provided_object(self, name: str) -> ProvidedObject | None:
        return next((p for p in self.provided if p.name == name), None)

    def own_check(self, kind: str) -> OwnCheck | None:
        return next((c for c in self.own_checks if c.kind == kind), None)

    def part_of(self, tag: str) -> str:
        return next((b.part for b in self.behaviours if b.id == tag), "stretch")

    def allows_check(self, kind: str) -> bool:
        """Whether a spec of this lab may use the engine's check kind ``kind``."""
        return self.shared_checks is None or kind in self.shared_checks
