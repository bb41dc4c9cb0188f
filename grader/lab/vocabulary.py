"""A lab's op vocabulary: the closed set of ops its specs may name, the grader's own callables
handed to student code, and the oracle that computes with them (``lab.yaml: ops``, a module of
the pack's ``pack/`` folder, loaded by path under the pack's private name).

The engine asks :func:`grader.lab.op_vocabulary` for the active lab's and knows nothing of any op itself: a spec's
``ops`` value is read against the vocabulary's kinds, the worker makes a case's ops with it and
the judge's oracle computes with it. What the module must define (each missing or wrong one is
one line naming the lab's file and its ``ops`` key):

* ``OP_KINDS``: a mapping of op name to a kind with ``takes`` (None, ``"number"`` or ``"seed"``:
  what a spec writes after the name), ``elementwise``, ``capturable`` and ``doc`` (text);
* ``apply_chain(chain, x)``: the oracle, the ops of ``chain`` (:class:`grader.spec_model.OpSpec`)
  applied in order to a copy of ``x``;
* ``Witness(locator)``: one case's log of op calls (``mark()``, ``since(mark)``: entries
  ``(list, position, address, shape, dtype, zero rows, site)``, ``close()``);
* ``make_ops(chain, list_id, witness)``: the ops handed to the submission for one op list;
* ``case_op_place(op, witness)``: ``(list, position)`` of one of the case's own ops, else None;
* ``GraderOp``: the class of those ops (its ``__call__`` is where an op's input is followed);
* ``GUARDED``: the classes the worker's guard compares after every case, and
  ``class_change()`` and ``take_changes_seen()`` (what an op call saw changed in its own class).

A vocabulary is loaded once per process and lab; in a worker before its sandbox closes and
before any submission code runs (:func:`grader.lab.preload_pack`), when the classes it
guards are taken as they are (:attr:`OpVocabulary.saved`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import CodeType, ModuleType
from typing import Any

from grader.lab.interface import Lab
from grader.lab.loading import LAB_FILE, LabError, pack_module

TAKES = (None, "number", "seed")
_FUNCTIONS = ("apply_chain", "make_ops", "case_op_place", "class_change", "take_changes_seen")
_CLASSES = ("Witness", "GraderOp")


@dataclass(frozen=True)
class OpVocabulary:
    """What the engine uses of a lab's op vocabulary (see the module doc)."""

    module: ModuleType
    kinds: Mapping[str, Any]
    apply_chain: Callable
    make_ops: Callable
    new_witness: type
    op_place: Callable
    op_class: type
    guarded: tuple[type, ...]
    class_change: Callable[[], str | None]
    take_changes_seen: Callable[[], str | None]
    # each guarded class, its metaclass and its namespace when the vocabulary was loaded
    saved: tuple[tuple[type, type, dict], ...]
    # the code of an op's ``__call__`` when the vocabulary was loaded (the origin tracer and the
    # line tracer follow the argument of the first op's call)
    op_call_code: CodeType

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.kinds)

    def takes(self, name: str) -> str | None:
        return self.kinds[name].takes


_LOADED: dict[tuple, OpVocabulary] = {}


def op_vocabulary(lab: Lab) -> OpVocabulary | None:
    """The op vocabulary of ``lab``; None for a lab without ops (``grader.lab.op_vocabulary``:
    the active lab's)."""
    if lab.ops is None:
        return None
    key = (lab.root, lab.id, lab.ops)
    found = _LOADED.get(key)
    if found is None:
        found = _LOADED[key] = _load(lab)
    return found


def _load(lab: Lab) -> OpVocabulary:
    def fail(problem: str) -> LabError:
        return LabError(f"{lab.root / LAB_FILE}: ops: {lab.ops} {problem}")

    module = pack_module(lab, lab.ops)
    for name in (*_FUNCTIONS, *_CLASSES, "OP_KINDS", "GUARDED"):
        if not hasattr(module, name):
            raise fail(f"defines no {name} (docs/labs.md: the op vocabulary)")
    for name in _FUNCTIONS:
        if not callable(getattr(module, name)):
            raise fail(f"{name} is not a function")
    for name in _CLASSES:
        if not isinstance(getattr(module, name), type):
            raise fail(f"{name} is not a class")
    kinds = module.OP_KINDS
    if not isinstance(kinds, Mapping) or not kinds:
        raise fail("OP_KINDS is not a mapping of one or more op names")
    for name, kind in kinds.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise fail(f"OP_KINDS: {name!r} is not an op name")
        for attribute in ("takes", "elementwise", "capturable", "doc"):
            if not hasattr(kind, attribute):
                raise fail(f"OP_KINDS[{name!r}] has no {attribute}")
        if kind.takes not in TAKES or not isinstance(kind.doc, str):
            raise fail(f"OP_KINDS[{name!r}]: takes must be one of {TAKES} and doc a text")
    guarded = module.GUARDED
    if not isinstance(guarded, tuple) or not all(isinstance(c, type) for c in guarded):
        raise fail("GUARDED is not a tuple of classes")
    if module.GraderOp not in guarded or module.Witness not in guarded:
        raise fail("GUARDED must hold GraderOp and Witness")
    return OpVocabulary(
        module=module,
        kinds=kinds,
        apply_chain=module.apply_chain,
        make_ops=module.make_ops,
        new_witness=module.Witness,
        op_place=module.case_op_place,
        op_class=module.GraderOp,
        guarded=guarded,
        class_change=module.class_change,
        take_changes_seen=module.take_changes_seen,
        saved=tuple((cls, type(cls), dict(cls.__dict__)) for cls in guarded),
        op_call_code=module.GraderOp.__call__.__code__,
    )
