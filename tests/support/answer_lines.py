"""The lines the line trace accepts for each answer slot of a submission (issue 33's closing note).

``python -m tests.support.answer_lines SUBMISSION...`` prints them; the answer tests use
:func:`accepted_lines` to pick right and wrong citations from the submission's own trace.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grader.lab import active
from grader.lab.loading import pack_attribute
from grader.suite.answer_slots import cited_slots
from grader.suite.loader import load_suite
from tests.support.running import run_alone

is_right = pack_attribute(active(), "pack.checks.cites:is_right")  # the lab's own rule
SPECS = Path(__file__).resolve().parents[2] / "specs"


def answer_cases():
    """The shipped suite's notebook-answers cases, by slot."""
    loaded = load_suite(SPECS)
    return {c.checks[0].slot: c for c in loaded.suite.cases if c.spec == "notebook-answers"}


def traces_of(submission: Path):
    """Each slot's probe traces, from the real runner (the sandboxed worker)."""
    cases = answer_cases()
    run = run_alone(submission, tuple(cases.values()))
    by_uid = {c.uid: c for c in run.cases}
    out = {}
    for slot, case in cases.items():
        observed = by_uid[case.uid].observation
        out[slot] = [s.trace for s in observed.steps if s.trace is not None] if observed else []
    return out


def accepted_lines(submission: Path) -> dict[str, list[str]]:
    """``FILE:LINE`` of every line the trace accepts, per slot."""
    accepted = {}
    for slot, traces in traces_of(submission).items():
        found = {f"{t.file}:{t.line}" for trace in traces for t in trace.lines if is_right(slot, t, trace)}
        accepted[slot] = sorted(found, key=lambda s: (s.rsplit(":", 1)[0], int(s.rsplit(":", 1)[1])))
    return {slot: accepted[slot] for slot in cited_slots()}


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(arg)
        for slot, lines in accepted_lines(Path(arg)).items():
            print(f"  {slot}: {', '.join(lines)}")
