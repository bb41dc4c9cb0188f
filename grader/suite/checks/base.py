"""What every check kind is: a frozen dataclass that parses itself, describes its schema and judges.

A check kind is one subclass of :class:`Check`, in its own module of this package. The
class *is* the registration: defining it adds its ``kind`` (the YAML key) to the registry,
and a class that misses a part (no ``kind``, no parser, no schema, no judging), or takes
a kind already taken, fails at import with a message that says so. Nothing else in the
grader lists the kinds: the loader, the JSON Schema and the judge all go through the
registry, so a kind cannot be known to one and missing from another.

A check holds step *references* in the fields named by ``step_fields``. While the loader
parses, they are draft keys (:class:`grader.suite.case_draft.DraftStep.key`); :meth:`Check.linked`
turns them into the steps' final indices once the case's step order is known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar, Protocol

from yaml.nodes import Node

if TYPE_CHECKING:
    from grader.observations import StepObservation
    from grader.spec_model import Case, Step
    from grader.suite.case_draft import CaseDraft

REGISTRY: dict[str, type[Check]] = {}
_REQUIRED = ("parse", "schema", "judge")


class Judging(Protocol):
    """What a check sees while it is judged (the judge of one case, :mod:`grader.judging.judge`)."""

    case: Case
    obs: tuple[StepObservation, ...]
    oracle: object  # grader.judging.judge.Oracle: ``inputs`` and ``outputs`` by step index
    answers: object  # grader.judging.answers.Answers of the submission, or None

    def record(
        self, step: Step | None, what: str, expected: str, observed: str, problem: str | None, at: str = ""
    ) -> None:
        """One line of the verdict; ``problem`` None means the line passed; ``at`` names the
        submission's line behind a failure (:mod:`grader.suite.locating`)."""


@dataclass(frozen=True)
class Check:
    """Base of every check kind (see the module doc). Subclasses are frozen dataclasses."""

    kind: ClassVar[str]  # the YAML key, e.g. "launches"
    order: ClassVar[int]  # where the kind is listed (docs, schema, error messages)
    step_fields: ClassVar[tuple[str, ...]] = ("step",)  # fields holding a step (or a tuple of steps)
    simulation_only: ClassVar[bool] = False  # observes the simulation's op witness: not judged on a real GPU

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if getattr(cls, "lab_owned", False):  # a lab pack's own kind: the active lab lists it, not the registry
            return
        if "kind" not in cls.__dict__:
            if cls.__dict__.get("abstract", False):
                return
            raise TypeError(
                f"check class {cls.__qualname__} ({cls.__module__}) sets no 'kind': every Check subclass is a check kind (set abstract = True on a shared base)"
            )
        missing = [name for name in _REQUIRED if next(k for k in cls.__mro__ if name in k.__dict__) is Check]
        if missing:
            raise TypeError(f"check kind {cls.kind!r} ({cls.__module__}) does not define {', '.join(missing)}")
        if not isinstance(cls.__dict__.get("order"), int):
            raise TypeError(f"check kind {cls.kind!r} ({cls.__module__}) sets no integer 'order'")
        if cls.kind in REGISTRY:
            raise TypeError(
                f"check kind {cls.kind!r} is defined twice: {REGISTRY[cls.kind].__module__} and {cls.__module__}"
            )
        REGISTRY[cls.kind] = cls

    # ------------------------------------------------------------ each kind defines
    @classmethod
    def parse(cls, draft: CaseDraft, body: Node, at: str, line: int) -> Check:
        """Read the check's YAML mapping ``body`` (errors name ``at`` and the node's line); step
        fields hold draft keys."""
        raise NotImplementedError

    @classmethod
    def schema(cls) -> dict:
        """The JSON Schema of the check's mapping (the value under its kind key)."""
        raise NotImplementedError

    def judge(self, judging: Judging) -> None:
        """Compare the observations with what this check expects; record one or more lines."""
        raise NotImplementedError

    # ------------------------------------------------------------ shared behaviour
    def looks_at(self) -> tuple[int, ...]:
        """The steps this check looks at (a step that did not run makes the check moot)."""
        out: list[int] = []
        for name in self.step_fields:
            value = getattr(self, name)
            out.extend(value if isinstance(value, tuple) else (value,))
        return tuple(out)

    def linked(self, index_of: Mapping[int, int]) -> Check:
        """This check with its draft step keys replaced by final step indices."""
        changes = {}
        for name in self.step_fields:
            value = getattr(self, name)
            changes[name] = tuple(index_of[k] for k in value) if isinstance(value, tuple) else index_of[value]
        return replace(self, **changes)

    def may_raise(self) -> tuple[int, ...]:
        """Steps this check expects to raise (their exception does not fail the case by itself)."""
        return ()

    def expected_launches(self) -> tuple[int, int] | None:
        """(step, launches) when this check pins a step's launch count (for the launch chart)."""
        return None

    def raise_decided_at(self, judging: Judging, index: int) -> str:
        """Location lines (:mod:`grader.suite.locating`) naming the decision behind an exception
        step ``index`` raised, a step this check looks at and could not judge, when what the check
        knows is due shows that decision was wrong (a lab's kind: a path chosen by a key other
        than the one due); "" otherwise: the raise line stays the cause."""
        return ""
