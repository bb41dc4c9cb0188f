"""Scoring: what the runner saw and what the judge decided -> one :class:`~grader.judging.results.Report`.

Points belong to specs and are split over a spec's cases (partial credit per
case) at a fixed precision of hundredths, by largest remainder: the cases'
points add up exactly to the spec's, and the specs' to the total, so a
full-marks submission scores 100, not 99.9997, in every output.

The report is the staff's full record: a case the student may not see in
detail (any visibility but ``visible``) keeps its steps, checks and output
here and is marked ``redacted``. Every student-facing renderer shows such a
case as one bit (passed or not, with one fixed message) through
:func:`reports.view.case_views`; the staff views (``staff.html``,
``summary.html``, Gradescope tests with visibility ``hidden``) show it all.
"""

from __future__ import annotations

from dataclasses import replace

from grader.judging.first_cause import first_cause
from grader.judging.judge import CaseVerdict, judge_case
from grader.judging.results import CaseResult, Report, SpecSummary
from grader.run.runner import CaseRun, SubmissionRun
from grader.spec_model import Case, Spec
from grader.suite.loader import LoadedSuite

CENTS = 100  # points are counted in hundredths


def to_cents(points: float) -> int:
    return int(round(float(points) * CENTS))


def split_points(points: float, n: int) -> list[float]:
    """``points`` over ``n`` cases in hundredths, by largest remainder (the first cases get the
    odd hundredths): the shares sum exactly to ``points`` rounded to hundredths."""
    if n <= 0:
        return []
    total = to_cents(points)
    base, extra = divmod(total, n)
    return [(base + (1 if i < extra else 0)) / CENTS for i in range(n)]


def add_points(values) -> float:
    """A sum of hundredths, exact (no float drift such as 99.99999999999997)."""
    return sum(to_cents(v) for v in values) / CENTS


def passed_checks(case: Case, verdict: CaseVerdict) -> int:
    """How many of the case's spec checks passed: a check passes when it was made (no step it
    looks at failed to run) and every line it recorded passed. A case that failed although every
    check passed (a step failed on its own, and no check looks at it) counts its last check failed,
    so a failed case never earns all its points."""
    made: dict[int, bool] = {}
    for line in verdict.checks:
        if line.check is not None:
            made[line.check] = made.get(line.check, True) and line.passed
    passed = sum(1 for ok in made.values() if ok)
    if verdict.status != "passed" and passed == len(case.checks):
        passed -= 1
    return passed


def check_share(share: float, n_checks: int, passed: int) -> float:
    """Per-check scoring: the points ``passed`` checks of ``n_checks`` earn of a case's ``share``
    (split in hundredths by :func:`split_points`, the first checks' shares counted first)."""
    return add_points(split_points(share, n_checks)[:passed])


def _case_result(
    spec: Spec, case: Case, share: float, run: CaseRun, loaded: LoadedSuite, answers: object = None
) -> CaseResult:
    per_check = spec.scoring == "per-check"
    common = dict(
        spec=spec.id,
        case=case.id,
        tag=spec.tag,
        max_score=share,
        visibility=spec.visibility,
        description=case.description,
        duration_s=run.duration_s,
        redacted=spec.visibility != "visible",
        scoring=spec.scoring,
        checks_total=len(case.checks) if per_check else 0,
    )
    if run.status == "observed" and run.observation is not None:
        verdict = judge_case(case, loaded.oracles[case.uid], run.observation, answers)
        passed = passed_checks(case, verdict) if per_check else 0
        if per_check:
            score = check_share(share, len(case.checks), passed)
        else:
            score = share if verdict.status == "passed" else 0.0
        return CaseResult(
            status=verdict.status,
            score=score,
            checks_passed=passed,
            message=verdict.message,
            steps=verdict.steps,
            checks=verdict.checks,
            launches=verdict.launches,
            output_tail=run.output_tail,
            cause=verdict.cause,
            origin=verdict.origin,
            origin_function=verdict.origin_function,
            hint=_cause_hint(spec, verdict),
            **common,
        )
    status = run.status if run.status != "observed" else "error"
    return CaseResult(status=status, score=0.0, message=run.message, output_tail=run.output_tail, **common)


def _cause_hint(spec: Spec, verdict: CaseVerdict) -> str:
    """The spec's hint for the cause key of the case's first failed check record (``hints:``),
    or "" (the spec's own hint applies)."""
    first = next((line for line in verdict.checks if not line.passed), None)
    return dict(spec.cause_hints).get(first.cause, "") if first is not None else ""


def build_report(
    submission: str,
    specs: tuple[Spec, ...],
    run: SubmissionRun,
    loaded: LoadedSuite,
    grader_version: str,
    withheld_points: float = 0.0,
    answers: object = None,
    known: dict[str, tuple[CaseResult, ...]] | None = None,
) -> Report:
    """The report of one submission graded against ``specs``: a "public" report when specs of the
    loaded suite were left out (a student's visible-only run), saying how many points they hold.
    ``withheld_points``: points of specs that are not in the loaded suite at all (a student kit
    ships only the public specs, and knows what its hidden ones are worth). ``answers``: the
    submission's notebook answers (:func:`grader.judging.answers.read_answers`), for the cites checks.
    ``known``: per spec id, its case results as judged before from the same inputs (a regrade:
    grader.commands.rejudging); those specs' cases are not judged again, nor looked for in ``run``."""
    runs = {c.uid: c for c in run.cases}
    cases: list[CaseResult] = []
    summaries: list[SpecSummary] = []
    for spec in specs:
        shares = split_points(spec.points, len(spec.cases))
        held = known.get(spec.id) if known else None
        results = (
            list(held)
            if held is not None
            else [
                _case_result(spec, case, share, runs[case.uid], loaded, answers)
                for case, share in zip(spec.cases, shares)
            ]
        )
        cases.extend(results)
        summaries.append(
            SpecSummary(
                id=spec.id,
                title=spec.title,
                tag=spec.tag,
                points=add_points([spec.points]),
                visibility=spec.visibility,
                explanation=spec.explanation,
                hint=spec.hint,
                score=add_points(r.score for r in results),
                max_score=add_points(shares),
                reading=spec.reading,
                scoring=spec.scoring,
            )
        )
    report = Report(
        submission=submission,
        score=add_points(c.score for c in cases),
        max_score=add_points(s.max_score for s in summaries),
        cases=tuple(cases),
        specs=tuple(summaries),
        problem=run.problem,
        output_tail=run.output_tail,
        duration_s=run.duration_s,
        grader_version=grader_version,
        scope="all" if len(specs) == len(loaded.suite.specs) and not withheld_points else "public",
        ungraded_points=add_points(
            [*(s.points for s in loaded.suite.specs if s.id not in {x.id for x in specs}), withheld_points]
        ),
    )
    return replace(report, first_cause=first_cause(report))
