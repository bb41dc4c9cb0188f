"""``output``: the array a step returned, against the op chain's oracle, literal values, a shape or a dtype."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.arrays import FLOAT_DTYPES, build_array, dtype_name
from grader.spec_model import ArrayValue, OpSpec
from grader.suite.checks.base import Check
from grader.suite.describing import compare_arrays, describe
from grader.suite.locating import bounded, frame_text
from grader.suite.schema_parts import STEP_NAME, schema_object
from grader.suite.spec_reading import read_array

from .runner_steps import padded_batch


@dataclass(frozen=True)
class OutputCheck(Check):
    """The step returned an array: equal to the op chain's oracle or a literal; shape, dtype."""

    step: int
    oracle: tuple[OpSpec, ...] | None = None
    equals: ArrayValue | None = None
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    line: int = 0

    kind = "output"
    order = 20
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's

    @classmethod
    def parse(cls, draft, body, at, line):
        reader = draft.reader
        fields = reader.mapping(body, at, ("step", "oracle", "equals", "shape", "dtype"), ("step",))
        step = draft.step(fields["step"][1], f"{at}.step", ("call", "method"))
        oracle = (
            reader.typed(fields["oracle"][1], f"{at}.oracle", (bool,), "true or false") if "oracle" in fields else False
        )
        bound = draft.bound.get(step.name) if step.name else None
        if oracle and (bound is None or bound.chain is None or bound.input is None):
            raise reader.fail(
                fields["oracle"][1],
                f"{at}.oracle",
                f"step {step.name!r} is not a call of run_eager or of a runner built with a literal op list on a known input, so no oracle is known",
            )
        equals = read_array(reader, fields["equals"][1], f"{at}.equals") if "equals" in fields else None
        shape = (
            tuple(
                reader.integer(d, f"{at}.shape[{j}]", 0)
                for j, d in enumerate(reader.sequence(fields["shape"][1], f"{at}.shape"))
            )
            if "shape" in fields
            else None
        )
        dtype = reader.choice(fields["dtype"][1], f"{at}.dtype", FLOAT_DTYPES, "dtype") if "dtype" in fields else None
        if not (oracle or equals or shape is not None or dtype):
            raise reader.fail(body, at, "say what to compare: oracle: true, equals, shape or dtype")
        return cls(step.key, bound.chain if oracle and bound else None, equals, shape, dtype, line)

    @classmethod
    def schema(cls):
        props = {
            "step": STEP_NAME,
            "oracle": {"type": "boolean"},
            "equals": {"$ref": "#/$defs/array"},
            "shape": {"type": "array", "items": {"type": "integer", "minimum": 0}},
            "dtype": {"enum": list(FLOAT_DTYPES)},
        }
        return schema_object(props, ("step",))

    def judge(self, j):
        step, obs = j.case.steps[self.step], j.obs[self.step]
        value = obs.value
        if self.shape is not None:
            got = list(value.shape) if isinstance(value, np.ndarray) else describe(value)
            ok = isinstance(value, np.ndarray) and value.shape == self.shape
            j.record(
                step,
                "output shape",
                str(list(self.shape)),
                str(got),
                None
                if ok
                else f"returned shape {got}, expected {list(self.shape)}." + _padded_rows_returned(j, self.step, value),
                at="" if ok else _made_at(obs),
            )
        if self.dtype is not None:
            got = dtype_name(value.dtype) if isinstance(value, np.ndarray) else describe(value)
            j.record(
                step,
                "output dtype",
                self.dtype,
                got,
                None if got == self.dtype else f"returned dtype {got}, expected {self.dtype}.",
            )
        comparisons = []  # both, when a check gives oracle: true and equals
        if self.oracle is not None:
            expected = j.oracle.outputs.get(self.step)
            what = (
                "output equals the op chain "
                + "["
                + ", ".join(op.label for op in self.oracle)
                + "] applied to the input"
            )
            if expected is None:  # never pass a check that compared nothing
                j.record(
                    step,
                    what,
                    "a value the oracle can compute",
                    describe(value),
                    "the grader could not compute this step's expected output (a spec error: run graphgrade validate).",
                )
                return
            comparisons.append((expected, what))
        if self.equals is not None:
            comparisons.append((build_array(self.equals), "output equals the given values"))
        for expected, what in comparisons:
            problem = compare_arrays(expected, value, dtype_name(expected.dtype))
            j.record(
                step,
                what,
                describe(expected),
                describe(value),
                None if problem is None else f"wrong output: {problem}." + _cause(j, self.step, expected, value),
                at="" if problem is None else _emptied_at(obs, self.oracle) + _order_at(obs) + _made_at(obs),
            )


def _made_at(obs) -> str:
    """Where the wrong value the call returned was made (its ``return``, followed into the function
    that return handed on), as a failed case's traced re-run notes it (grader.run.relocating); ""
    when the call was not traced."""
    made = next((o.frame for o in obs.origin if o.kind == "produced"), None)
    return bounded(f"\n  returned at {frame_text(made)}") if made is not None else ""


def _emptied_at(obs, chain: tuple[OpSpec, ...] | None) -> str:
    """Ops of the chain that never ran during the step, where a loop of the step walked a list
    found empty: where that list was last changed (``run.clear()`` in the fusion loop of an
    earlier step, the list a fused op then walks), as a failed case's traced re-run notes it
    (``emptied``, grader.observe.list_changes); "" otherwise."""
    emptied = next((o.frame for o in obs.origin if o.kind == "emptied"), None)
    if emptied is None or not chain or len({(w.list_id, w.position) for w in obs.witness}) >= len(chain):
        return ""
    return bounded(
        f"\n  last set at {frame_text(emptied)}   (a loop of this step walked this list empty: ops never ran)"
    )


def _order_at(obs) -> str:
    """Ops run out of their list's order (a later op ran first): where the op that ran first was
    chosen, the line that bound the name it was called by (``for op in reversed(self.parts):``),
    as a failed case's traced re-run notes it (``called``); "" otherwise."""
    called = next((o.frame for o in obs.origin if o.kind == "called"), None)
    first = obs.witness[0] if obs.witness else None
    if called is None or first is None:
        return ""
    if not any(w.list_id == first.list_id and w.position < first.position for w in obs.witness[1:]):
        return ""
    return bounded(f"\n  at {frame_text(called)}   (the op run first was chosen here: the ops ran out of their order)")


def _cause(j, index: int, expected: np.ndarray, value: object) -> str:
    """Why an output is wrong, when the observations show it: the padded rows came back, or the
    value is the result of an earlier call's input (a stale output)."""
    padded = _padded_rows_returned(j, index, value)
    if padded or not isinstance(value, np.ndarray) or value.shape != expected.shape:
        return padded
    tolerance = dtype_name(expected.dtype)
    for earlier in sorted((k for k in j.oracle.outputs if k < index), reverse=True):
        before = j.oracle.outputs[earlier]
        if compare_arrays(before, value, tolerance) is None and compare_arrays(expected, before, tolerance) is not None:
            return (
                f" It is the result for the input of step {earlier + 1}: a call must compute from the input it was"
                " just given (a replay copies it into the static buffer and recomputes), never return an output"
                " computed before."
            )
    return ""


def _padded_rows_returned(j, index: int, value: object) -> str:
    """The cause when a padded call returned the padded batch instead of its real rows."""
    x = j.oracle.inputs.get(index)
    batch = padded_batch(j.case, index)
    if x is None or batch is None or not isinstance(value, np.ndarray) or not value.ndim or not x.ndim:
        return ""
    if value.shape[0] == batch != x.shape[0] and value.shape[1:] == x.shape[1:]:
        return (
            f" The {batch - x.shape[0]} padded rows came back too: return only the {x.shape[0]} real rows of the batch."
        )
    return ""
