"""A bounded re-run of a submission's failed cases with every runner's call traced (issue 34,
point 3): where a wrong decision inside a call (warm up once more, capture, replay) was made.

A first run traces a runner's call only when its case judges that call's graphs or its first
op's input (grader.observe.interpreter): tracing every call would cost every passing submission
about a third more step time. So once a submission has been judged, the lead cases of its first
causes (at most :data:`grader.judging.first_cause.MAX_RELOCATED`, and only cases that failed)
run again in a fresh confined worker of the same slot, as any case runs, with each ``call`` step
marked ``trace_call``: the worker then notes, per call, the test that chose its path
(``decided``, grader.observe.origins). The grader judges that run only to locate those cases
(grader.judging.first_cause.relocated): verdicts and scores are the first run's, and a case
whose re-run is judged otherwise in any way keeps its first location. A submission none of
whose cases failed is never re-run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from grader.run.runner import RunSettings, SubmissionRun, run_submission
from grader.run.scratch import ScratchArea
from grader.run.zygote_client import Zygote
from grader.spec_model import Case


def traced(case: Case) -> Case:
    """``case`` with every call step traced (its message differs only by those steps' flag)."""
    return replace(case, steps=tuple(replace(s, trace_call=True) if s.action == "call" else s for s in case.steps))


def rerun_traced(
    zygote: Zygote,
    area: ScratchArea,
    slot: int,
    submission: Path,
    cases: tuple[Case, ...],
    settings: RunSettings,
    uids: tuple[str, ...],
    first: SubmissionRun,
) -> SubmissionRun:
    """``first`` with the cases ``uids`` replaced by their traced re-run (in the order ``cases``
    runs, hidden ones as hidden: nothing a re-run prints is kept). Only a case the re-run observed
    replaces its first run's; the rest of ``first`` is untouched."""
    wanted = set(uids)
    indexes = [i for i, case in enumerate(cases) if case.uid in wanted]
    if not indexes:
        return first
    chosen = tuple(traced(cases[i]) for i in indexes)
    again = run_submission(zygote, area, slot, submission, chosen, settings)
    runs = list(first.cases)
    for index, run in zip(indexes, again.cases):
        if run.status == "observed" and run.observation is not None and first.cases[index].status == "observed":
            runs[index] = replace(run, output_tail=first.cases[index].output_tail)
    return replace(first, cases=tuple(runs))
