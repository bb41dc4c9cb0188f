"""A step's argument values as a spec gives them: seeded or literal arrays, the grader's op lists,
capturability masks, references to an earlier step's result, and plain YAML scalars.

Their own module so that the step kinds (:mod:`grader.step_kinds`), which the case model
(:mod:`grader.spec_model`) asks how to word a step, can read them without importing the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class ArrayValue:
    """An input array: seeded standard normal of a shape, or literal values."""

    dtype: str
    shape: tuple[int, ...]
    seed: int | None = None
    values: tuple | None = None  # nested tuples, when given literally

    @cached_property  # spec data: the same text for every submission graded
    def label(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        src = f" seed {self.seed}" if self.seed is not None else " (literal)"
        return f"{self.dtype}[{dims}]{src}"


@dataclass(frozen=True)
class OpSpec:
    """An op as a spec names it: ``relu`` or ``{add: 1.5}``: a kind of the lab's op vocabulary
    (:mod:`grader.lab.vocabulary`), which alone knows what it computes."""

    name: str
    param: float | int | None = None

    @cached_property  # spec data: the same text for every submission graded
    def label(self) -> str:
        return self.name if self.param is None else f"{self.name}({self.param:g})"


@dataclass(frozen=True)
class OpsValue:
    """A fresh list of the lab's ops (each case gets its own instances)."""

    chain: tuple[OpSpec, ...]

    @cached_property  # spec data: the same text for every submission graded
    def label(self) -> str:
        return "[" + ", ".join(op.label for op in self.chain) + "]"


@dataclass(frozen=True)
class MaskValue:
    """``is_capturable``: a callable answering ``mask[i]`` for op ``i``."""

    mask: tuple[bool, ...]

    @cached_property  # spec data: the same text for every submission graded
    def label(self) -> str:
        return "is_capturable=" + "".join("C" if m else "E" for m in self.mask)


@dataclass(frozen=True)
class RefValue:
    """The result (or built object) of an earlier named step."""

    name: str

    @cached_property  # spec data: the same text for every submission graded
    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class PlainValue:
    """A YAML scalar or a list of scalars, passed as is."""

    value: object

    @cached_property  # spec data: the same text for every submission graded
    def label(self) -> str:
        return repr(self.value)


Value = ArrayValue | OpsValue | MaskValue | RefValue | PlainValue
