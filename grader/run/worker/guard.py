"""A case whose submission changed the classes of the objects the grader hands it is not
observed as if nothing happened.

A case hands the submission the lab's ops (its op vocabulary's ``GraderOp``,
:mod:`grader.lab.vocabulary`), which write every call into the vocabulary's ``Witness`` log; the
structural checks (the static buffer, one launch per replay, padding) read that log. Patching the
op's class (``type(op).__call__ = ...``, ``setattr(type(op), ...)``) rewrites what every later
call records. This module keeps what both classes held before any submission code ran (taken
when the vocabulary is loaded: in the zygote, or in the worker before its sandbox closes) and,
after each case, compares: a case that ran with a changed class gets, for every step, an error that names
what changed, instead of its observations; in ``--isolation module`` its worker also retires
(the change would outlive the case).

Each op call also checks its own class before it records anything (the vocabulary's ``class_change``):
a patch that is in place while an op runs is seen even when the submission puts it back before
the case ends, and :func:`changed` reports it too. What is left: a patch that is never in place
while an op of the grader runs, which can only change the arguments an op is handed (it sees the
buffer it is really handed, and records that) or its return value (judged like any other value).
The op's call log is reachable from no object a submission is handed (the vocabulary's ``Witness``).
See SECURITY.md, "What is NOT defended", 1.
"""

from __future__ import annotations

from grader import arrays, framing, observations
from grader.lab import op_vocabulary
from grader.spec_model import Step

ERROR_TYPE = "GraderObjectChanged"
_MISSING = object()


def host_only() -> None:
    """In a worker, before any submission code: see :func:`grader.arrays.host_only`."""
    arrays.host_only()


def changed() -> str | None:
    """What of the lab's guarded classes (its op vocabulary's ``GUARDED``, taken when the
    vocabulary was loaded, before any submission ran) differs now, or what an op call saw changed
    in its own class while it ran (a patch put back before the case ended: the vocabulary's
    ``class_change``), None if nothing (and for a lab without ops). Forgets what the calls saw."""
    ops = op_vocabulary()
    if ops is None:
        return None
    seen = ops.take_changes_seen() or ops.class_change()  # the latter: a function's code, replaced
    if seen is not None:
        return seen
    for cls in ops.guarded:
        if getattr(ops.module, cls.__name__, None) is not cls:
            return f"{ops.module.__name__}.{cls.__name__}"
    for cls, meta, saved in ops.saved:
        if type(cls) is not meta:
            return f"{cls.__name__}'s metaclass"
        now = cls.__dict__
        for name in now.keys() - saved.keys():
            return f"{cls.__name__}.{name}"
        for name, value in saved.items():
            if now.get(name, _MISSING) is not value:
                return f"{cls.__name__}.{name}"
    return None


def tampered_frame(uid: str, steps: tuple[Step, ...], what: str) -> bytes:
    """The case's frame when ``what`` changed: every step raised an error that says so."""
    message = (
        f"the submission changed {what}, part of the op class the grader hands it: what this case "
        "observed (the op calls and their buffers) cannot be trusted"
    )
    error = framing.ErrorRecord(type=ERROR_TYPE, message=observations.shorten(message)).wire()
    records = [framing.StepRecord(step.index, outcome="raised", error=error).wire() for step in steps]
    return observations.encode_observations(uid, records, [])


def checked(frame: bytes, uid: str, steps: tuple[Step, ...]) -> tuple[bytes, bool]:
    """``frame`` as observed, or :func:`tampered_frame` if a guarded class changed; and whether
    one did."""
    what = changed()
    if what is None:
        return frame, False
    return tampered_frame(uid, steps, what), True
