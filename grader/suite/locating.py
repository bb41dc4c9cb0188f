"""The line in the student's code: what the worker located (grader.observe.locations), in words.

Judging side only: observations are validated data (:class:`grader.observations.SourceFrame` and the
step's ``sites`` and ``bumps``). A located failure reads, below the cause::

    at student.py:104 in replay: np.copyto(entry.static_inputs, x)
    your code's traceback (most recent call last):
      student.py:131 in __call__: return self.replay(x)
      student.py:104 in replay: np.copyto(entry.static_inputs, x)

Only the submission's own frames are ever shown. Every text here is bounded
(:data:`MAX_LOCATION`), and :func:`first_location` reads the file and line back out of a
message (the terminal line of ``graphgrade grade`` names the first failure's line).
"""

from __future__ import annotations

import re

from grader.framing import ORIGIN_STORED
from grader.observations import Origin, Raised, SourceFrame, StepObservation

STORED = ORIGIN_STORED.rstrip(":")  # where an attribute a test compared was stored, no parameter read there

MAX_LOCATION = 1200  # characters of the location block added to one message
MAX_SHOWN_SITES = 4  # distinct call sites named in one message
_AT = re.compile(
    r"^  (?:at|called at|counted at|decided at|returned at|last set at) (?P<where>(?P<file>\S+):(?P<line>\d+))"
    r"(?: in (?P<function>[^\s:]+)|(?= )|$)",
    re.M,
)


def frame_text(frame: SourceFrame) -> str:
    source = f": {frame.source}" if frame.source else ""
    return f"{frame.file}:{frame.line} in {frame.function}{source}"


def short_where(frame: SourceFrame) -> str:
    return f"{frame.file}:{frame.line}"


def bounded(text: str) -> str:
    return text if len(text) <= MAX_LOCATION else text[: MAX_LOCATION - 1] + "…"


def raised_at(error: Raised | None) -> str:
    """Lines naming where an exception was raised in the submission's code ("" when nowhere):
    the innermost frame, then the submission's traceback when it has more than one frame."""
    if error is None or not error.frames:
        return ""
    text = f"\n  at {frame_text(error.frames[-1])}"
    if len(error.frames) > 1:
        text += "\n  your code's traceback (most recent call last):"
        text += "".join(f"\n    {frame_text(f)}" for f in error.frames)
    return bounded(text)


def raised_where(error: Raised | None) -> str:
    """`` at student.py:104`` for a step's one-line outcome, or ""."""
    return f" at {short_where(error.frames[-1])}" if error is not None and error.frames else ""


def site_lines(frames: tuple[SourceFrame, ...], lead: str, note: str = "") -> str:
    text = f"\n  {lead} {frame_text(frames[0])}{note}"
    return text + "".join(f"\n    called from {frame_text(f)}" for f in frames[1:])


def call_at(obs: StepObservation, site: int, what: str = "") -> str:
    """Lines naming the submission's line that made one call (an op's, by its witness site)."""
    frames = obs.site(site)
    if not frames:
        return ""
    lead = f"\n  {what}" if what else ""
    return bounded(lead + site_lines(frames, "called at"))


def first_location(message: str) -> str:
    """The first ``file:line`` a located message names ("" when it names none)."""
    found = _AT.search(message)
    return found.group("where") if found else ""


def first_frame(at: str) -> tuple[str, int, str]:
    """The first place the location lines ``at`` (built here, by this module) name, as (file, line,
    function): ("", 0, "") when none. The judge stores them as a check record's own fields, so no
    renderer reads a location back out of text."""
    found = _AT.search(at)
    if not found:
        return "", 0, ""
    return found.group("file"), int(found.group("line")), found.group("function") or ""


def origin_at(
    obs: StepObservation,
    state_wrong: bool = False,
    expected: str = "",
    decided: SourceFrame | None = None,
    arguments: dict[int, tuple[int, int]] | None = None,
) -> str:
    """Lines naming where a step's wrong value came from in the submission (grader.observe.origins),
    the likeliest cause first: the test that chose a plain ``return`` (``if n <= warmup:`` above
    ``return Mode.WARMUP``), else the ``return`` that computed the value, else, for an
    attribute read, the line that last assigned it. "" when the worker saw none of them.
    ``decided``: the test that chose the path of the object's last call (a re-run's, else None):
    a value computed from state no call ever changed was decided there (no capture was made).
    ``arguments``: per positional parameter of the object's constructor, the int it was given and
    the value the contract makes of it, where they differ (lab.yaml: ``at_least``): a test that
    compared an attribute stored from that parameter and still holding it as given (a re-run's
    ``stored:N``) is right, and the line that stored it is named before it."""
    by_kind = {o.kind: o.frame for o in obs.origin}
    returned = by_kind.get("returned") or by_kind.get("returned-plain")
    tested = by_kind.get("tested")
    assigned = by_kind.get("assigned")
    state = by_kind.get("state")
    if state_wrong and state is not None and decided is not None and state.function != "__init__":
        # state a call built (a capture) where the object's results are wrong: that call's decision
        return bounded(
            f"\n  decided at {frame_text(decided)}\n    then last set at {frame_text(state)}"
            f"\n    then returned at {frame_text(returned)}"
        )
    if state_wrong and state is not None and returned is not None:
        # the object's other results are wrong too: the state the return computes from, not the return
        return bounded(f"\n  last set at {frame_text(state)}\n    then returned at {frame_text(returned)}")
    for i, (passed, guards) in enumerate(zip(obs.origin, obs.origin[1:])):
        # an earlier test not taken whose own return hands back the expected value: that test
        if expected and passed.kind == "passed" and guards.kind == "guards" and _returns(guards.frame, expected):
            lead = _test_lead(obs.origin[i + 2 :], arguments or {})
            test = f"{lead}decided at {frame_text(passed.frame)}   (not taken)"
            return bounded(f"{test}\n    then returned at {frame_text(returned)}")
    if "returned-plain" in by_kind and tested is not None:
        after = next(i for i, o in enumerate(obs.origin) if o.kind == "tested") + 1
        lead = _test_lead(obs.origin[after:], arguments or {})
        return bounded(f"{lead}decided at {frame_text(tested)}\n    then returned at {frame_text(returned)}")
    if "returned-plain" in by_kind and assigned is not None and assigned.function != "__init__":
        # return self._count, set by another method since: that method's line is the likelier cause
        return bounded(f"\n  last set at {frame_text(assigned)}\n    then returned at {frame_text(returned)}")
    if decided is not None and state is None and "returned" in by_kind:
        return bounded(f"\n  decided at {frame_text(decided)}\n    then returned at {frame_text(returned)}")
    if returned is not None:
        return bounded(f"\n  returned at {frame_text(returned)}")
    return bounded(f"\n  last set at {frame_text(assigned)}") if assigned is not None else ""


def decision_at(obs: StepObservation, note: str = "", lookups: bool = False) -> str:
    """Lines naming the test that chose a traced call's path (a re-run's ``decided``), ``note``
    after it; led by where the value that test compared was made when a function of the
    submission returned it (``compared``: ``return (batch,)`` of the key helper, before ``if
    entry is not None:``), or the test that chose it (a plain ``return size`` in the branch of ``if
    size > n:``): the test is right, the value it was handed is not. ``lookups``: with no such
    value, where a helper made the value an earlier test on the path compared through a lookup
    (``looked-up``: a capture where a replay was due, past ``if entry is not None:``, a miss).
    "" when not traced."""
    by_kind = {o.kind: o.frame for o in obs.origin}
    decided, compared = by_kind.get("decided"), by_kind.get("compared")
    what = "the value the test below compared"
    if compared is None and lookups and "looked-up" in by_kind:
        compared, what = by_kind["looked-up"], "the value a lookup on this path missed by"
    if decided is None:
        return ""
    if compared is None:
        return bounded(f"\n  decided at {frame_text(decided)}{note}")
    if compared.source.startswith("return"):
        lead = f"returned at {frame_text(compared)}   ({what})"
    else:  # a plain return's test, taken (``if size > n: return size``): it chose that value
        lead = f"decided at {frame_text(compared)}   (it chose {what})"
    return bounded(f"\n  {lead}\n    then decided at {frame_text(decided)}{note}")


def field_at(obs: StepObservation, field: str) -> str:
    """Lines naming where, during a runner's call, its captured graph's record got ``field``
    (grader.observe.origins): the line that made the value handed to it, "" when not seen."""
    frame = next((o.frame for o in obs.origin if o.kind == f"field:{field}"), None)
    return bounded(f"\n  last set at {frame_text(frame)}") if frame is not None else ""


def argument_at(obs: StepObservation) -> str:
    """Lines naming where the array the step's first op call was handed came from (the line that
    bound the name handed to the op, or the call that passed it in), "" when not seen."""
    frame = next((o.frame for o in obs.origin if o.kind == "argument"), None)
    return bounded(f"\n  last set at {frame_text(frame)}") if frame is not None else ""


def _test_lead(following: tuple[Origin, ...], arguments: dict[int, tuple[int, int]]) -> str:
    """How the lines naming a test start: with where an attribute the test compared was stored
    (the ``stored`` frames that follow the test, ``following``) when it was stored from the
    constructor's parameter N and still holds the argument as given where the contract makes
    another value of it (``arguments``: N -> (given, due)); else with the test itself."""
    for origin in following:
        if origin.kind != STORED and not origin.kind.startswith(ORIGIN_STORED):
            break
        position = origin.kind[len(ORIGIN_STORED) :]
        given, due = arguments.get(int(position), (None, None)) if position.isdigit() else (None, None)
        if origin.valued and type(origin.value) is int and origin.value == given:
            why = f"it holds the argument {given} as given; the contract makes it {due}"
            return f"\n  last set at {frame_text(origin.frame)}   ({why})\n    then "
    return "\n  "


def _returns(frame: SourceFrame, name: str) -> bool:
    """Whether a guarded plain ``return`` line hands back the name ``name`` (``return
    Mode.WARMUP`` for ``WARMUP``)."""
    text = frame.source.split("#", 1)[0].strip()
    return text.startswith("return ") and text.rsplit(".", 1)[-1].strip() == name
