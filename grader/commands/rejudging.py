"""A regrade judges again only what changed: per spec, and per submission.

A case's result (:class:`~grader.judging.results.CaseResult`) is a function of its spec (its
text as loaded: title, weight, hint, checks, steps), the case's observation frame, output tail
and time, the submission's notebook answers, and the code that judges (the grader's source,
the lab, their versions). :func:`spec_digests` hashes those per spec; the report as a whole
adds its own fields (name, path, flags, the run's tail and time, the suite's other specs).
``grade`` records both in the submission's report manifest
(:mod:`grader.commands.report_manifest`) when it writes its files.

On a regrade from the observation cache, a report process compares them with the manifest's:

- every digest equal: the report is the one in the folder's ``report.json`` (read back only
  when its bytes are those the manifest recorded, and refused as a whole on any difference);
  nothing is decoded, judged or rendered;
- some specs' digests equal: those specs' case results are taken from that ``report.json``,
  and only the other specs' cases are decoded and judged; the report is built from both, as
  it would be from judging all of it.

The frames hashed are those judged: in a cold grading the frames the workers sent (kept by the
cache's run for the cases it stores), in a regrade the cache's. A case with no frame (not
cached: a timeout, a crash, too large a frame) leaves the submission without digests, and its
next regrade judges all of it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import PurePath

from grader.judging.results import CaseResult, Report
from grader.run.cache import case_digest
from grader.run.runner import SubmissionRun
from grader.spec_model import Case, Spec

FORMAT = b"graphgrade judged 1\0"


@dataclass(frozen=True)
class Judged:
    """What a submission's report was judged from: one digest per spec, and one of all of it."""

    report: str
    specs: tuple[tuple[str, str], ...]  # (spec id, digest), in the report's order

    def as_json(self) -> dict:
        return {"report": self.report, "specs": dict(self.specs)}


def _part(h, data: str) -> None:
    from grader.run.cache import hash_part

    hash_part(h, data.encode("utf-8", "surrogateescape"))


_BASES: dict[int, tuple[Spec, bytes]] = {}  # by id(spec), the spec kept with it (never hashed: any field may be a list)


def _spec_base(spec: Spec) -> bytes:
    """The judging code and the spec's whole text, hashed once per spec per process."""
    held = _BASES.get(id(spec))
    if held is not None and held[0] is spec:
        return held[1]
    if len(_BASES) > 4096:  # a process that loads suite after suite (tests) keeps a bounded few
        _BASES.clear()
    _BASES[id(spec)] = (spec, digest := _spec_digest(spec))
    return digest


def _spec_digest(spec: Spec) -> bytes:
    from grader.commands.report_manifest import renderers_digest

    h = hashlib.sha256(FORMAT)
    _part(h, renderers_digest())  # the grader's source, the lab, the versions
    # a spec's and its cases' file by its name alone: no report holds the folder the specs were
    # read from (a course's edited copy judges as the original did); their lines are hashed
    named = replace(
        spec, file=PurePath(spec.file).name, cases=tuple(replace(c, file=PurePath(c.file).name) for c in spec.cases)
    )
    _part(h, repr(named))
    return h.digest()


def stored_case_digest(entry: object) -> bytes | None:
    """:func:`case_digest` of a case as the observation cache stores it: the digest the grader
    stored beside its frame (:func:`grader.run.cache.case_entry`), else computed from the frame;
    None when the entry is not whole (the case is then decoded and judged, and says what is wrong
    with it)."""
    if not isinstance(entry, dict):
        return None
    frame, tail, duration = entry.get("frame"), entry.get("output_tail"), entry.get("duration_s")
    if not isinstance(frame, str) or not isinstance(tail, str):
        return None
    if not isinstance(duration, (int, float)) or isinstance(duration, bool):
        return None
    stored = entry.get("digest")
    if isinstance(stored, str) and len(stored) == 64:
        try:
            return bytes.fromhex(stored)
        except ValueError:
            pass
    try:
        raw = base64.b64decode(frame, validate=True)
    except (binascii.Error, ValueError):
        return None
    return case_digest(raw, tail, duration)


def judged_digests(
    specs: tuple[Spec, ...],
    case_digests: dict[str, bytes],
    answers: object,
    whole: Iterable[str],
) -> Judged | None:
    """The digests of a report judged against ``specs``, from each case's digest (by case uid);
    ``whole``: the report's own fields, as text. None when a case has no digest."""
    answers_text = repr(answers)
    per_spec = []
    top = hashlib.sha256(FORMAT + b"report\0")
    for spec in specs:
        h = hashlib.sha256(_spec_base(spec))
        _part(h, answers_text)
        for case in spec.cases:
            digest = case_digests.get(case.uid)
            if digest is None:
                return None
            h.update(digest)
        per_spec.append((spec.id, h.hexdigest()))
        _part(top, spec.id)
        _part(top, per_spec[-1][1])
    for text in whole:
        _part(top, text)
    return Judged(top.hexdigest(), tuple(per_spec))


def report_fields(
    name: str, path: str, version: str, flags: object, output_tail: str, duration_s: float, suite: str
) -> tuple[str, ...]:
    """A report's fields besides its specs' results (see :func:`judged_digests`'s ``whole``)."""
    return (name, path, version, repr(flags), output_tail, repr(float(duration_s)), suite)


def suite_text(loaded, withheld_points: float) -> str:
    """What a report's scope and ungraded points are computed from, besides its specs."""
    return repr((tuple((s.id, s.points) for s in loaded.suite.specs), float(withheld_points)))


def reusable(
    previous: Report, recorded: dict, now: Judged, specs: tuple[Spec, ...]
) -> dict[str, tuple[CaseResult, ...]]:
    """The case results of ``previous`` (the folder's report, vouched for by its manifest) for
    every spec whose digest is the one ``recorded`` with it: those specs need no judging.

    Not the specs of ``previous``'s first causes: their cases were located by the submission's
    traced re-run (grader.run.relocating), and which cases a report's re-run locates is chosen
    from the report as its first run judged it. Judged again from the first run's frames, those
    specs give that report back, so the regrade asks the cache for the re-run the grading kept;
    taken as located, they could rank another case first, whose re-run no cache holds."""
    old = recorded.get("specs")
    if not isinstance(old, dict):
        return {}
    shown = previous.first_cause
    located = {c.case.split("/", 1)[0] for c in (shown.staff, shown.student) if c is not None} if shown else set()
    by_spec: dict[str, list[CaseResult]] = {}
    for case in previous.cases:
        by_spec.setdefault(case.spec, []).append(case)
    known = {}
    for spec, (spec_id, digest) in zip(specs, now.specs):
        results = by_spec.get(spec_id, [])
        if spec_id in located:
            continue
        if old.get(spec_id) == digest and [r.case for r in results] == [c.id for c in spec.cases]:
            known[spec_id] = tuple(results)
    return known


def rejudge(cache, entry_key: str, keys: list[str], cases, specs: tuple[Spec, ...], folder, answers, digests):
    """In a report process: a submission the cache holds whole, as far as it needs judging.
    Returns (its run, the specs' known case results, the report when nothing needs judging,
    the digests to record), or None when the cache does not hold it whole (the grader then
    grades it as usual). ``cases``: in the order of ``keys`` (run order); ``digests``: the
    grader's function of (output tail, run time, case digests by uid) to a :class:`Judged`."""
    from grader.commands.report_manifest import previous_report
    from grader.judging.report_reading import ReportError, report_from_json
    from grader.run.cache import runs_key
    from grader.run.runner import SubmissionRun

    stored = cache.read_submission(entry_key, 0)
    if stored.output_tail is None or not all(key in stored.cases for key in keys):
        return None
    by_uid = {}
    for key, case in zip(keys, cases):
        digest = stored_case_digest(stored.cases[key])
        if digest is not None:
            by_uid[case.uid] = digest
    duration = stored.durations.get(runs_key(keys))
    now = None if duration is None else digests(stored.output_tail, duration, by_uid)
    known: dict[str, tuple[CaseResult, ...]] = {}
    previous = previous_report(folder) if now is not None else None
    if previous is not None:
        import orjson

        data, recorded = previous
        try:
            report = report_from_json(orjson.loads(data))
        except (ValueError, RecursionError, ReportError):
            report = None
        if report is not None and recorded.get("report") == now.report:
            return None, {}, report, now.as_json()  # judged before from these very inputs
        if report is not None:
            known = reusable(report, recorded, now, specs)
    wanted = {case.uid for spec in specs if spec.id not in known for case in spec.cases}
    found = []
    for key, case in zip(keys, cases):
        if case.uid not in wanted:
            continue
        run = cache.case_run(stored.cases[key], case)
        if run is None:
            return None
        found.append(run)
    if duration is None:  # no run time kept for these cases: the sum of theirs, all decoded
        duration = sum(r.duration_s for r in found)
    run = SubmissionRun("", tuple(found), stored.output_tail, duration)
    return run, known, None, None if now is None else now.as_json()


@dataclass(frozen=True)
class ToLocate:
    """A submission judged in a report process from the cache, whose first causes' traced re-run
    the cache does not hold (an edit made a case the lead of a cause that never led before): the
    grader runs those cases traced in a slot, as a cold grading does (it stores them for the next
    regrade), locates them, and writes the report. Nothing else is decoded or judged again."""

    report: Report  # judged, not yet located
    entry_key: str  # the submission's entry in the cache
    keys: tuple[str, ...]  # the cache keys of the lead cases' specs' cases, in run order
    cases: tuple[Case, ...]  # those cases
    run: SubmissionRun  # their first run, as the cache holds it (frames dropped: judging reads none)
    known: dict[str, tuple[CaseResult, ...]]  # every other spec's results (:func:`not_leads`)
    digests: dict | None  # what the report was judged from, for its manifest


def to_locate(report: Report, entry_key: str, part, digests: dict | None) -> ToLocate:
    """:class:`ToLocate` from :func:`for_relocation`'s answer ``part``."""
    keys, cases, run, known = part
    bare = replace(run, cases=tuple(replace(c, frame=b"") for c in run.cases))
    return ToLocate(report, entry_key, tuple(keys), cases, bare, known, digests)


def not_leads(report: Report, specs: tuple[Spec, ...], uids) -> dict[str, tuple[CaseResult, ...]]:
    """The case results of ``report`` for every spec but those of the lead cases ``uids``: what
    judging a submission's traced re-run (grader.run.relocating) need not judge again, its
    other cases' observations being the first run's."""
    leads = {spec.id for spec in specs for case in spec.cases if case.uid in uids}
    held: dict[str, list[CaseResult]] = {spec.id: [] for spec in specs if spec.id not in leads}
    for case in report.cases:
        if case.spec in held:
            held[case.spec].append(case)
    return {spec: tuple(results) for spec, results in held.items()}


def for_relocation(cache, entry_key: str, keys: list[str], cases, specs: tuple[Spec, ...], run, report: Report, uids):
    """What locating the lead cases ``uids`` of a partly rejudged submission takes: the cases of
    their specs (a cold grading judges each such spec whole from the traced re-run), from ``run``
    (the cases judged again) or else decoded from the cache. Returns (their keys and cases, in
    run order; a run of them; :func:`not_leads`), or None when a case does not decode (the
    submission is then graded whole)."""
    leads = {spec.id for spec in specs for case in spec.cases if case.uid in uids}
    wanted = {case.uid for spec in specs if spec.id in leads for case in spec.cases}
    by_uid = {r.uid: r for r in run.cases if r.uid in wanted}
    if wanted - set(by_uid):
        stored = cache.read_submission(entry_key, 0)
        for key, case in zip(keys, cases):
            if case.uid in wanted and case.uid not in by_uid:
                found = cache.case_run(stored.cases.get(key), case)
                if found is None:
                    return None
                by_uid[case.uid] = found
    chosen = [(key, case) for key, case in zip(keys, cases) if case.uid in wanted]
    return (
        [key for key, _ in chosen],
        tuple(case for _, case in chosen),
        replace(run, cases=tuple(by_uid[case.uid] for _, case in chosen)),
        not_leads(report, specs, uids),
    )
