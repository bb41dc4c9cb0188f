"""A bounded re-run of a submission's failed cases with every runner's call traced (issue 34,
point 3): where a wrong decision inside a call (warm up once more, capture, replay) was made.

A first run traces a runner's call only when its case judges that call's graphs or its first
op's input (grader.observe.interpreter): tracing every call would cost every passing submission
about a third more step time. So once a submission has been judged, the lead cases of its first
causes (at most :data:`grader.judging.first_cause.MAX_RELOCATED`, and only cases that failed)
run again in a fresh confined worker of the same slot, as any case runs, with each ``call`` step
marked ``trace_call``: the worker then notes, per call, the test that chose its path
(``decided``, grader.observe.origins). In a case whose build hands its constructor an argument
the contract makes another value of (lab.yaml: ``at_least``), its builds, methods, reads and
sets are marked too: the worker notes what their tests compared and where it was stored
(grader.observe.stored_values). The grader judges that run only to locate those cases
(grader.judging.first_cause.relocated): verdicts and scores are the first run's, and a case
whose re-run is judged otherwise in any way keeps its first location. A submission none of
whose cases failed is never re-run.

With an observation cache, the re-run's observations are kept beside the first run's, in a file
of their own (:func:`traced_keys`: derived from the first run's keys, so a report process that
judges a cached submission finds them from the keys it was handed). A regrade of an unchanged
submission therefore re-runs nothing, neither its cases nor their traced re-run. A traced case
that observed nothing usable (a timeout, a crash, a frame too large to keep) is kept as such:
it keeps its first location on every regrade, as it did in the grading that ran it, and is not
run again.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from grader.run.cache import MAX_CACHED_FRAME, ObservationCache, case_entry, within_budget
from grader.run.runner import CaseRun, RunSettings, SubmissionRun, run_submission
from grader.run.scratch import ScratchArea
from grader.run.zygote_client import Zygote
from grader.spec_model import Case
from grader.step_kinds import step_kind

Keyed = tuple[str, list[str]]  # a submission's cache entry key and its cases' keys (grader.run.cache.cache_keys)


def traced(case: Case) -> Case:
    """``case`` with each step its kind traces deeper in a re-run marked ``trace_call`` (its message
    differs only by those flags; grader.step_kinds ``retraced``): every call; every build,
    method, read and set of a case whose build hands an argument the contract makes another
    value of (a warm-up of 0 where the lab raises it to 1). A case with none of them is itself
    (a probe's lines are traced in the first run already): its re-run could observe nothing new."""
    steps = tuple(replace(s, trace_call=True) if step_kind(s.action).retraced(s, case.steps) else s for s in case.steps)
    return replace(case, steps=steps)


def traced_key(key: str) -> str:
    """The cache key of the traced re-run of what ``key`` keys in the first run (a submission's
    entry, or one of its cases): the traced case's steps are its first run's with some marked
    (:func:`traced`), so the first run's key, which covers runtime, submission and steps, determines it."""
    return hashlib.sha256(b"traced\0" + key.encode()).hexdigest()


def traced_keys(keyed: Keyed, indexes: list[int]) -> Keyed:
    """The traced re-run's entry key and the keys of the cases ``indexes``."""
    entry_key, keys = keyed
    return traced_key(entry_key), [traced_key(keys[i]) for i in indexes]


def _indexes(cases: tuple[Case, ...], uids: tuple[str, ...]) -> list[int]:
    wanted = set(uids)
    return [i for i, case in enumerate(cases) if case.uid in wanted]


def _merged(first: SubmissionRun, indexes: list[int], runs: list[CaseRun | None]) -> SubmissionRun:
    """``first`` with the cases ``indexes`` replaced by their re-run; only a case the re-run
    observed replaces its first run's, and it keeps its first run's output tail."""
    merged = list(first.cases)
    for index, run in zip(indexes, runs):
        if (
            run is not None
            and run.status == "observed"
            and run.observation is not None
            and first.cases[index].status == "observed"
        ):
            merged[index] = replace(run, output_tail=first.cases[index].output_tail, frame=b"")
    return replace(first, cases=tuple(merged))


_HELD_UNOBSERVED = "unobserved"  # a stored re-run that observed nothing usable: no re-run, no new location


def _stored(cache: ObservationCache, entry: object, case: Case) -> CaseRun | str | None:
    """A stored traced case: its run, :data:`_HELD_UNOBSERVED`, or None when none is held whole."""
    if isinstance(entry, dict) and entry.get("case") == case.uid and entry.get("observed") is False:
        return _HELD_UNOBSERVED
    return cache.case_run(entry, case)


def stored_traced(
    cache: ObservationCache, keyed: Keyed, cases: tuple[Case, ...], uids: tuple[str, ...], first: SubmissionRun
) -> SubmissionRun | None:
    """``first`` with the cases ``uids`` replaced by their traced re-run as the cache holds it;
    None when it does not hold each of them (then they must run: :func:`rerun_traced`). Reads
    only the cache: a report process calls it."""
    indexes = _indexes(cases, uids)
    if not indexes:
        return first
    entry_key, keys = traced_keys(keyed, indexes)
    stored = cache.read_submission(entry_key, 0)
    runs: list[CaseRun | None] = []
    for key, index in zip(keys, indexes):
        run = _stored(cache, stored.cases.get(key), traced(cases[index]))
        if run is None:
            return None
        runs.append(None if isinstance(run, str) else run)
    return _merged(first, indexes, runs)


def rerun_traced(
    zygote: Zygote,
    area: ScratchArea,
    slot: int,
    submission: Path,
    cases: tuple[Case, ...],
    settings: RunSettings,
    uids: tuple[str, ...],
    first: SubmissionRun,
    cache: ObservationCache | None = None,
    keyed: Keyed | None = None,
) -> SubmissionRun:
    """``first`` with the cases ``uids`` replaced by their traced re-run (in the order ``cases``
    runs, hidden ones as hidden: nothing a re-run prints is kept). Only a case the re-run
    observed replaces its first run's; the rest of ``first`` is untouched. With a ``cache`` (and
    the submission's ``keyed`` in it), only the traced cases it does not hold run, and what they
    observed is kept for the next regrade."""
    indexes = _indexes(cases, uids)
    if not indexes:
        return first
    chosen = tuple(traced(cases[i]) for i in indexes)
    if cache is None or keyed is None:
        again = run_submission(zygote, area, slot, submission, chosen, settings)
        return _merged(first, indexes, list(again.cases))
    entry_key, keys = traced_keys(keyed, indexes)
    stored = cache.read_submission(entry_key, 0)
    held = [_stored(cache, stored.cases.get(key), case) for key, case in zip(keys, chosen)]
    missing = [j for j, run in enumerate(held) if run is None]
    runs: list[CaseRun | None] = [None if isinstance(run, str) else run for run in held]
    if missing:
        again = run_submission(
            zygote,
            area,
            slot,
            submission,
            tuple(chosen[j] for j in missing),
            settings,
            keep_frame_bytes=MAX_CACHED_FRAME,
        )
        entries = dict(stored.cases)
        for j, run in zip(missing, again.cases):
            # kept even when nothing usable came back (a timeout, a crash, an import that failed
            # this time): the next regrade judges as this grading did, and runs nothing
            usable = None if again.problem else case_entry(run)
            entries[keys[j]] = usable or {"case": chosen[j].uid, "observed": False}
            runs[j] = None if again.problem else run
        cache.put(entry_key, {"traced": True, "output_tail": "", "cases": within_budget(entries, keys)})
    return _merged(first, indexes, runs)
