"""What the line tracer saw during a probe (issue 33): the facts on the wire and as the grader reads them.

A probe step (:mod:`grader.suite.steps`, action ``probe``) builds the submission's runner,
calls it once to capture and once more, with a new input of the same shape, to replay,
while :mod:`grader.observe.line_trace` follows every line of the submission's own files.
For each line that ran it records *what happened while that line ran*, as flags and
counts; it judges nothing. The grader (:mod:`grader.suite.checks.cites`) compares the lines
a student cites in answers.md with these facts.

"While a line ran" has two levels: ``direct`` (the innermost line of the submission that
was running) and ``via a call`` (the line one level up that called the helper holding it).
The launch counter's own methods (the lab's ``launch_counter`` entry point) are not
followed: a bump is credited to the line that called it.

On the wire a trace is ``{"lines": [[file, line, function, flags, replay bumps, replay
bumps via a call, capture bumps], ...], "replay_launches": int | null, "buffer": bool,
"cache": str}``. The decoder bounds and validates every part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grader import validation
from grader.safetext import safe_text

# ---------------------------------------------------------------- the flags of one line
RAN_CAPTURE = 1 << 0  # the line ran during the capture call
RAN_REPLAY = 1 << 1  # the line ran during the replay call
FILL = 1 << 2  # during the replay the new input landed in the captured static buffer while it ran
FILL_VIA_CALL = 1 << 3  # ... while a helper it called ran (one level down)
STORE = 1 << 4  # during the capture the cache gained its entry while it ran
STORE_VIA_CALL = 1 << 5
KEY = 1 << 6  # during the replay it bound or returned the cache key (or the padded batch size)
KEY_VIA_CALL = 1 << 7
FETCH = 1 << 8  # during the replay it bound or returned the cached entry
FETCH_VIA_CALL = 1 << 9
BRANCH = 1 << 10  # the last line capture and replay ran alike: where the two calls part ways
ALL_FLAGS = (1 << 11) - 1

MAX_TRACE_LINES = 512
MAX_TRACE_TEXT = 200
MAX_COUNT = 1 << 40


@dataclass(frozen=True)
class TracedLine:
    """One line of the submission that ran during the probe, and what happened while it ran."""

    file: str  # relative to the submission's folder
    line: int
    function: str
    flags: int
    replay_bumps: int  # launches counted while it ran during the replay (directly)
    replay_bumps_via_call: int  # ... while a helper it called ran
    capture_bumps: int  # launches counted while it (or a helper it called) ran during the capture

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)


@dataclass(frozen=True)
class Trace:
    """A probe's facts: the lines that ran, the launches the whole replay cost, whether the
    captured static buffer was found and the runner attribute that held the cache."""

    lines: tuple[TracedLine, ...]
    replay_launches: int | None
    buffer: bool
    cache: str

    def at(self, file: str, line: int) -> TracedLine | None:
        return next((t for t in self.lines if t.line == line and t.file == file), None)


def wire(lines: list[list], replay_launches: int | None, buffer: bool, cache: str) -> dict:
    """The worker's record of a trace (already bounded by the tracer)."""
    return {
        "lines": lines[:MAX_TRACE_LINES],
        "replay_launches": replay_launches,
        "buffer": buffer,
        "cache": cache[:MAX_TRACE_TEXT],
    }


def _count(value: Any, where: str) -> int:
    if type(value) is not int or not -MAX_COUNT < value < MAX_COUNT:
        raise validation.Invalid("expected a bounded integer", where)
    return value


def decode(raw: Any, where: str) -> Trace | None:
    """A trace as the worker sent it, validated; None when the step has none."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"lines", "replay_launches", "buffer", "cache"}:
        raise validation.Invalid("expected a trace {lines, replay_launches, buffer, cache}", where)
    found = []
    for i, item in enumerate(validation.bounded_list(raw["lines"], f"{where}.lines", MAX_TRACE_LINES)):
        at = f"{where}.lines[{i}]"
        if not isinstance(item, list) or len(item) != 7:
            raise validation.Invalid(
                "expected [file, line, function, flags, bumps, bumps via a call, capture bumps]", at
            )
        line = _count(item[1], at)
        flags = _count(item[3], at)
        if line < 1 or flags & ~ALL_FLAGS or flags < 0:
            raise validation.Invalid("a line number below 1 or unknown flags", at)
        found.append(
            TracedLine(
                safe_text(validation.text(item[0], at, MAX_TRACE_TEXT)),
                line,
                safe_text(validation.text(item[2], at, MAX_TRACE_TEXT)),
                flags,
                _count(item[4], at),
                _count(item[5], at),
                _count(item[6], at),
            )
        )
    launches = raw["replay_launches"]
    if type(raw["buffer"]) is not bool:
        raise validation.Invalid("expected true or false", f"{where}.buffer")
    return Trace(
        lines=tuple(found),
        replay_launches=None if launches is None else _count(launches, f"{where}.replay_launches"),
        buffer=raw["buffer"],
        cache=safe_text(validation.text(raw["cache"], f"{where}.cache", MAX_TRACE_TEXT)),
    )
