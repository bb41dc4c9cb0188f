"""Causes: one message per cause, whatever step numbers and counts it names, and the one cause
a student should fix first."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .cases import CaseView
from .specs import SpecView
from .text import one_line, slug

_STEP_PREFIX = re.compile(r"^Step \d+ \((?P<label>.*?)\): (?P<rest>.*)$", re.S)
_CONSEQUENCE = re.compile(
    r"\s*(?:Steps? [\d\u2013, ]+ needs? its result and did not run[^.]*\.|\d+ checks? of this step could not be made\.)"
)
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _callee(label: str) -> str:
    label = re.sub(r"^\w+ = ", "", label)
    return re.sub(r"\(.*", "(\u2026)", label, flags=re.S)


@lru_cache(maxsize=8192)  # a class repeats the same few messages hundreds of times
def failure_cause(message: str) -> str:
    """A failure message with what varies per case taken out (step numbers and arguments,
    counts, values), so that one cause is one row however many cases it stops."""
    text = one_line(message)
    m = _STEP_PREFIX.match(text)
    if m:
        text = f"{_callee(m.group('label'))}: {m.group('rest')}"
    text = _CONSEQUENCE.sub("", text)
    return _NUMBER.sub("#", text).strip()


@dataclass(frozen=True)
class FixFirst:
    """The one thing a student should fix first: the cause that stops the most visible cases."""

    cause: str
    message: str  # the first case's own message, as an example
    n_cases: int
    n_specs: int
    anchor: str
    spec_title: str
    case_label: str


def fix_first(specs: tuple[SpecView, ...]) -> FixFirst | None:
    """The most common cause among cases shown in full (a hidden case's cause is never used),
    the earliest spec winning ties: the first failure of a half-done lab is usually the part
    not written yet, and fixing it clears every case it stops."""
    groups: dict[str, list[tuple[SpecView, CaseView]]] = {}
    for s in specs:
        for c in s.open_cases:
            if not c.redacted and c.message:
                groups.setdefault(failure_cause(c.message), []).append((s, c))
    if not groups:
        return None
    cause, hits = max(groups.items(), key=lambda kv: (len(kv[1]), -specs.index(kv[1][0][0])))
    spec, case = hits[0]
    return FixFirst(
        cause=cause,
        message=case.message,
        n_cases=len(hits),
        n_specs=len({id(s) for s, _ in hits}),
        anchor=f"{spec.anchor}-{slug(case.label)}",
        spec_title=spec.spec.title,
        case_label=case.label,
    )
