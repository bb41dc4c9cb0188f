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
from grader.spec_model import CONTRACT_NAMES, Case, Spec

HIDDEN_FAILURE = "This case is not shown to students. Read the spec's explanation and hint, and check your code against them."


def _case_result(spec: Spec, case: Case, run: CaseRun, loaded: LoadedSuite, problem: str = "") -> CaseResult:
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
    message = _redacted_message(case, run, result, problem)
    # Nothing the submission controls survives redaction, its timing included (a hidden case could
    # otherwise signal what it was given through how long it sleeps).
    kept = {k: v for k, v in common.items() if k not in ("description", "duration_s")}
    return CaseResult(status=result.status, score=result.score, message=message, redacted=True, **kept)


def _missing_names(case: Case, run: CaseRun) -> list[str]:
    """Contract names a case needed and the submission lacks, named from the trusted steps
    (never from what the worker wrote)."""
    if run.observation is None:
        return []
    names: list[str] = []
    for step, obs in zip(case.steps, run.observation.steps):
        if obs.outcome == "missing":
            name = step.target if step.action in ("build", "call") else step.on
            if name in CONTRACT_NAMES and name in case.needs and name not in names:
                names.append(name)
    return names


def _redacted_message(case: Case, run: CaseRun, result: CaseResult, problem: str) -> str:
    """The one message a student sees for a case not shown in detail. It may say what is already
    known without the case (the submission-wide problem, a timeout, a crash), which contract name
    the case needed and the code lacks, or that the code raised NotImplementedError (a part not
    written yet: one bit, as much as pass/fail already says); never an input, a value or a step."""
    if result.status == "passed":
        return "All checks passed."
    if result.status == "timeout":  # fixed text naming only the grader's own limits
        return result.message
    if result.status == "crashed":  # not the exit code or signal: the submission chooses those
        return "The case's process ended before it reported a result (a crash, a signal, sys.exit at interpreter level or os._exit). " + HIDDEN_FAILURE
    if result.status == "error" and problem and run.message == problem:
        return problem
    missing = _missing_names(case, run)
    if missing:
        return f"This case needs {', '.join(missing)}, which your cudagraph.py does not define. " + HIDDEN_FAILURE
    if run.observation is not None and any(o.outcome == "raised" and o.error is not None and o.error.type == "NotImplementedError" for o in run.observation.steps):
        return "Your code raised NotImplementedError in this case (a part not written yet?). " + HIDDEN_FAILURE
    return HIDDEN_FAILURE


def build_report(submission: str, specs: tuple[Spec, ...], run: SubmissionRun, loaded: LoadedSuite, grader_version: str) -> Report:
    runs = {c.uid: c for c in run.cases}
    cases: list[CaseResult] = []
    summaries: list[SpecSummary] = []
    for spec in specs:
        results = [_case_result(spec, case, runs[case.uid], loaded, run.problem) for case in spec.cases]
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
