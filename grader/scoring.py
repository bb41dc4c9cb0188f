"""Scoring: what the runner saw and what the judge decided -> one :class:`~grader.results.Report`.

Points belong to specs and are split equally over a spec's cases (partial
credit per case). A case the student may not see in detail (any visibility
but ``visible``) is *redacted* here, at the source: its steps, checks, launch
picture and output tail are dropped and its message is replaced by one that
names no input and no expected value, so no renderer can leak them.
"""

from __future__ import annotations

from grader.judge import judge_case
from grader.loader import LoadedSuite
from grader.results import CaseResult, Report, SpecSummary
from grader.runner import CaseRun, SubmissionRun
from grader.spec_model import Case, Spec

HIDDEN_FAILURE = "This case is not shown to students. Read the spec's explanation and hint, and check your code against them."
SAFE_RUNNER_STATUSES = ("timeout", "crashed")


def _case_result(spec: Spec, case: Case, run: CaseRun, loaded: LoadedSuite) -> CaseResult:
    share = spec.points / len(spec.cases)
    common = dict(spec=spec.id, case=case.id, tag=spec.tag, max_score=share, visibility=spec.visibility, description=case.description, duration_s=run.duration_s)
    if run.status == "observed" and run.observation is not None:
        verdict = judge_case(case, loaded.oracles[case.uid], run.observation)
        result = CaseResult(
            status=verdict.status,
            score=share if verdict.status == "passed" else 0.0,
            message=verdict.message,
            steps=verdict.steps,
            checks=verdict.checks,
            launches=verdict.launches,
            output_tail=run.output_tail,
            **common,
        )
    else:
        status = run.status if run.status != "observed" else "error"
        result = CaseResult(status=status, score=0.0, message=run.message, output_tail=run.output_tail, **common)
    if spec.visibility == "visible":
        return result
    message = "All checks passed." if result.status == "passed" else (result.message if result.status in SAFE_RUNNER_STATUSES else HIDDEN_FAILURE)
    return CaseResult(status=result.status, score=result.score, message=message, redacted=True, description="", **{k: v for k, v in common.items() if k != "description"})


def build_report(submission: str, specs: tuple[Spec, ...], run: SubmissionRun, loaded: LoadedSuite, grader_version: str) -> Report:
    runs = {c.uid: c for c in run.cases}
    cases: list[CaseResult] = []
    summaries: list[SpecSummary] = []
    for spec in specs:
        results = [_case_result(spec, case, runs[case.uid], loaded) for case in spec.cases]
        cases.extend(results)
        summaries.append(
            SpecSummary(
                id=spec.id,
                title=spec.title,
                tag=spec.tag,
                points=spec.points,
                visibility=spec.visibility,
                explanation=spec.explanation,
                hint=spec.hint,
                score=round(sum(r.score for r in results), 6),
                max_score=spec.points,
            )
        )
    return Report(
        submission=submission,
        score=round(sum(c.score for c in cases), 6),
        max_score=round(sum(s.points for s in specs), 6),
        cases=tuple(cases),
        specs=tuple(summaries),
        problem=run.problem,
        output_tail=run.output_tail,
        duration_s=run.duration_s,
        grader_version=grader_version,
    )
