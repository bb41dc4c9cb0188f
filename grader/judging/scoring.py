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
from grader.judging.judge import judge_case
from grader.judging.results import CaseResult, Report, SpecSummary
from grader.run.runner import CaseRun, SubmissionRun
from grader.spec.loader import LoadedSuite
from grader.spec_model import Case, Spec

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


def _case_result(
    spec: Spec, case: Case, share: float, run: CaseRun, loaded: LoadedSuite, answers: object = None
) -> CaseResult:
    common = dict(
        spec=spec.id,
        case=case.id,
        tag=spec.tag,
        max_score=share,
        visibility=spec.visibility,
        description=case.description,
        duration_s=run.duration_s,
        redacted=spec.visibility != "visible",
    )
    if run.status == "observed" and run.observation is not None:
        verdict = judge_case(case, loaded.oracles[case.uid], run.observation, answers)
        return CaseResult(
            status=verdict.status,
            score=share if verdict.status == "passed" else 0.0,
            message=verdict.message,
            steps=verdict.steps,
            checks=verdict.checks,
            launches=verdict.launches,
            output_tail=run.output_tail,
            cause=verdict.cause,
            origin=verdict.origin,
            origin_function=verdict.origin_function,
            hint=dict(spec.cause_hints).get(verdict.cause, "") if verdict.status != "passed" else "",
            **common,
        )
    status = run.status if run.status != "observed" else "error"
    return CaseResult(status=status, score=0.0, message=run.message, output_tail=run.output_tail, **common)


def build_report(
    submission: str,
    specs: tuple[Spec, ...],
    run: SubmissionRun,
    loaded: LoadedSuite,
    grader_version: str,
    withheld_points: float = 0.0,
    answers: object = None,
) -> Report:
    """The report of one submission graded against ``specs``: a "public" report when specs of the
    loaded suite were left out (a student's visible-only run), saying how many points they hold.
    ``withheld_points``: points of specs that are not in the loaded suite at all (a student kit
    ships only the public specs, and knows what its hidden ones are worth). ``answers``: the
    submission's notebook answers (:func:`grader.judging.answers.read_answers`), for the cites checks."""
    runs = {c.uid: c for c in run.cases}
    cases: list[CaseResult] = []
    summaries: list[SpecSummary] = []
    for spec in specs:
        shares = split_points(spec.points, len(spec.cases))
        results = [
            _case_result(spec, case, share, runs[case.uid], loaded, answers) for case, share in zip(spec.cases, shares)
        ]
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
