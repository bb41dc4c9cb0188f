"""The decode-step lab's own check: which calls a step made on the fake engine.

``engine_calls: {of: ENGINE, during: STEP, equals: [[capture, 4, 1]]}`` passes when, while
step ``STEP`` ran, the engine bound as ``ENGINE`` was called exactly so: these calls, in this
order, and no other. A call is written as a list: ``[run, batch_size, seq_step]``,
``[capture, batch_size, seq_step]`` or ``[replay, graph_id, batch_size, seq_step]``.
``one_of: [LIST, LIST, ...]`` instead of ``equals`` accepts any of several call lists: for a
step where the contract leaves the choice to the student (a replay step of the core lab may
run normally or replay the graph).

Written as plain functions over plain data (the calls the worker recorded, as lists), with
no import from the grader: the engine's check registry wraps :func:`parse_expected_calls`
(the spec side, with ``file:line`` errors from the ``ValueError`` it raises) and
:func:`judge_engine_calls` (the judging side, returning a :class:`CallsVerdict`).
"""

from __future__ import annotations

from dataclasses import dataclass

# The engine's methods and how many integer arguments a call of each records.
CALL_ARITY = {"run": 2, "capture": 2, "replay": 3}
CALL_ARGUMENTS = {
    "run": ("batch_size", "seq_step"),
    "capture": ("batch_size", "seq_step"),
    "replay": ("graph_id", "batch_size", "seq_step"),
}

EngineCall = tuple  # ("run", 4, 1), ("replay", 0, 4, 1), ...


@dataclass(frozen=True)
class CallsVerdict:
    """The outcome of one ``engine_calls`` check: whether it held, the claim in words, and the
    expected and observed call lists as text a report shows as they are."""

    passed: bool
    claim: str
    expected: str
    actual: str


def parse_expected_calls(value: object) -> tuple[EngineCall, ...]:
    """The ``equals`` list of an ``engine_calls`` check, checked: a list (maybe empty) of calls,
    each a method name followed by its integer arguments. Raises ``ValueError`` with one line
    naming the first bad entry."""
    if not isinstance(value, list):
        raise ValueError(f"equals: expected a list of calls such as [[run, 4, 1]], got {value!r}")
    calls = []
    for i, call in enumerate(value):
        if not isinstance(call, list) or not call or call[0] not in CALL_ARITY:
            raise ValueError(f"equals[{i}]: expected [run|capture|replay, integer arguments...], got {call!r}")
        name, args = call[0], call[1:]
        if len(args) != CALL_ARITY[name] or any(isinstance(a, bool) or not isinstance(a, int) for a in args):
            wanted = ", ".join(CALL_ARGUMENTS[name])
            raise ValueError(f"equals[{i}]: a {name} call is [{name}, {wanted}] (integers), got {call!r}")
        calls.append((name, *args))
    return tuple(calls)


def parse_accepted(equals: object = None, one_of: object = None) -> tuple[tuple[EngineCall, ...], ...]:
    """The call lists an ``engine_calls`` check accepts: its ``equals`` list alone, or each list
    of its ``one_of`` (at least two). Exactly one of the two keys must be given."""
    if (equals is None) == (one_of is None):
        raise ValueError("engine_calls: give exactly one of 'equals' (a list of calls) and 'one_of' (lists of calls)")
    if equals is not None:
        return (parse_expected_calls(equals),)
    if not isinstance(one_of, list) or len(one_of) < 2:
        raise ValueError(f"one_of: expected two or more lists of calls, got {one_of!r}")
    accepted = []
    for i, calls in enumerate(one_of):
        try:
            accepted.append(parse_expected_calls(calls))
        except ValueError as exc:
            raise ValueError(f"one_of[{i}].{exc}") from None
    return tuple(accepted)


def describe_call(call: EngineCall) -> str:
    """One call as a reader writes it: ``capture(batch_size=4, seq_step=1)``."""
    name, args = call[0], call[1:]
    names = CALL_ARGUMENTS.get(name, ())
    if len(names) != len(args):
        return f"{name}({', '.join(map(repr, args))})"
    return f"{name}({', '.join(f'{n}={a!r}' for n, a in zip(names, args))})"


def describe_calls(calls: tuple[EngineCall, ...] | list[EngineCall]) -> str:
    """A list of calls in words; ``no call`` for none."""
    return ", then ".join(describe_call(c) for c in calls) if calls else "no call"


def judge_engine_calls(step: str, accepted: tuple[tuple[EngineCall, ...], ...], observed: list | None) -> CallsVerdict:
    """Compare the calls step ``step`` made (``observed``, as the worker sent them: lists, or
    None when the step did not run) with each accepted call list, exactly and in order."""
    expected = " or ".join(describe_calls(calls) for calls in accepted)
    claim = f"during {step}, the engine was called: {expected}"
    if observed is None:
        return CallsVerdict(False, claim, expected, f"{step} did not run")
    seen = tuple(tuple(c) for c in observed)
    return CallsVerdict(any(seen == tuple(calls) for calls in accepted), claim, expected, describe_calls(seen))
