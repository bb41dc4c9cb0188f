"""Hand-built Report objects for the tests of ``reports/``, and the tests that they are fit for it.

Four submissions: one that passes everything, one that fails a few cases with
full detail (steps, checks, launches), one that crashes (its output carries a
``<script>`` tag to prove escaping), and one with a hidden, redacted case whose
secret inputs sit exactly where a careless grader might leave them.

The renderers' tests (test_reports, test_gradescope, test_junit, test_csv_export, test_view_*,
test_results, test_progress, test_review, test_reports_browser, test_feedback, test_integrity)
import these samples (and the ``any_report`` fixture, each sample in turn); the tests at the
end of this file check that the samples are real reports (they survive report.json's reader
unchanged) and hold what those tests look for, so a test that finds no secret or no status in a page does so because the page left it out.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from grader.judging.report_reading import report_from_json
from grader.judging.report_writing import report_to_json
from grader.judging.results import STATUSES, CaseResult, CheckLine, LaunchPoint, Report, SpecSummary, StepLine

# The hidden case's original values: they must appear in NO student-facing file.
SECRET_NUMBER = "987654321"
SECRET_INPUT = "float32[7, 13] seed 424242"
SECRET_CASE_ID = "odd-shape-seed-424242"
SECRETS = (SECRET_NUMBER, SECRET_INPUT, "424242", SECRET_CASE_ID)

SCRIPT = "<script>alert(1)</script>"

# id, title, tag, points, visibility
SPEC_ROWS = (
    ("launch-counter-basics", "The launch counter counts every launch", "launch-counter", 2.0, "visible"),
    ("eager-one-per-op", "Eager runs pay one launch per op", "eager", 3.0, "visible"),
    ("shape-keyed-cache", "Graphs are cached per input shape", "shape-cache", 4.0, "visible"),
    ("static-input-buffer", "Replays copy into the captured input buffer", "static-buffer", 4.0, "visible"),
    ("replay-one-launch", "A replay costs exactly one launch", "single-launch-replay", 5.0, "visible"),
    ("piecewise-segments", "Piecewise capture splits at uncapturable ops", "piecewise", 4.0, "visible"),
    ("padding-capture-sizes", "Batches pad up to the nearest capture size", "padding", 3.0, "hidden"),
    ("decode-state-machine", "The decode step walks warm-up, capture, replay", "state-machine", 3.0, "visible"),
)

EXPLANATIONS = {
    "launch-counter": "Counting launches stands in for timing them: every kernel launch costs CPU time, and that overhead is what CUDA graphs remove.",
    "eager": "Eager mode launches each op on its own. It is the baseline a graph must beat, and every engine falls back to it for shapes it did not capture.",
    "shape-cache": "A captured graph bakes in its shapes, so engines keep one graph per shape and look it up on every decode step.",
    "static-buffer": "A graph replays with the very addresses it recorded. New inputs must be copied into the captured buffer, or the replay reads stale data.",
    "single-launch-replay": "This is the whole point: a replay launches the recorded work with one call, however many kernels it holds.",
    "piecewise": "Attention with a growing KV cache cannot be captured; engines capture the pieces around it and run it eagerly.",
    "padding": "Engines capture a few batch sizes and pad real batches up to the nearest one, so a handful of graphs serve every batch.",
    "state-machine": "The decode loop warms up, captures once, then replays; the state machine keeps that order honest.",
}


def _spec(row, cases) -> SpecSummary:
    sid, title, tag, points, vis = row
    return SpecSummary(
        id=sid,
        title=title,
        tag=tag,
        points=points,
        visibility=vis,
        explanation=EXPLANATIONS[tag],
        hint=f"Look at how your code handles the {tag.replace('-', ' ')} behaviour.",
        score=sum(c.score for c in cases),
        max_score=sum(c.max_score for c in cases),
    )


def _passing_cases(row, n=2) -> list[CaseResult]:
    sid, _title, tag, points, vis = row
    return [
        CaseResult(
            spec=sid,
            case=f"{sid}-case-{i + 1}",
            tag=tag,
            status="passed",
            score=points / n,
            max_score=points / n,
            message="",
            visibility="visible" if vis == "visible" else vis,
            description=f"Scenario {i + 1} of {sid}.",
            duration_s=0.012 * (i + 1),
        )
        for i in range(n)
    ]


def make_report(name: str, cases: list[CaseResult], problem: str = "", output_tail: str = "") -> Report:
    """A consistent report: spec and submission scores are the sums of their cases."""
    specs = []
    for row in SPEC_ROWS:
        mine = [c for c in cases if c.spec == row[0]]
        if mine:
            specs.append(_spec(row, mine))
    return Report(
        submission=name,
        score=sum(c.score for c in cases),
        max_score=sum(c.max_score for c in cases),
        cases=tuple(cases),
        specs=tuple(specs),
        problem=problem,
        output_tail=output_tail,
        duration_s=3.4,
        grader_version="0.1.0",
    )


def all_passing_cases() -> list[CaseResult]:
    return [c for row in SPEC_ROWS for c in _passing_cases(row)]


def passing_report(name: str = "alice") -> Report:
    return make_report(name, all_passing_cases())


REPLAY_FAIL = CaseResult(
    spec="replay-one-launch",
    case="replay-costs-one-launch",
    tag="single-launch-replay",
    status="failed",
    score=0.0,
    max_score=2.5,
    message="The second call with the same shape launched 3 times; a replay should launch once.",
    description="Call a 3-op runner twice with float32[4, 8]: the first call captures, the second replays.",
    steps=(
        StepLine(0, "runner = GraphRunner(ops=[scale, add_bias, relu])", "returned a GraphRunner"),
        StepLine(1, "runner(x: float32[4, 8])", "returned float32[4, 8]"),
        StepLine(2, "runner(x: float32[4, 8])", "returned float32[4, 8]"),
        StepLine(3, "runner(x: float32[4, 8])", "returned float32[4, 8]"),
    ),
    checks=(
        CheckLine(1, "launches during this call", "3", "3", True),
        CheckLine(2, "launches during this call", "1", "3", False),
        CheckLine(3, "launches during this call", "1", "3", False),
        CheckLine(None, "runner.num_captured after the calls", "1", "1", True),
    ),
    launches=(
        LaunchPoint(1, "capture", 3, 3),
        LaunchPoint(2, "replay", 1, 3),
        LaunchPoint(3, "replay", 1, 3),
    ),
    output_tail="captured graph for (4, 8)\n",
    duration_s=0.031,
)

STATIC_FAIL = CaseResult(
    spec="static-input-buffer",
    case="replay-reuses-static-input",
    tag="static-buffer",
    status="failed",
    score=0.0,
    max_score=2.0,
    message="On replay the first op saw a new array, not the captured static input.\nCopy x into entry.static_input with np.copyto instead of rebinding it.",
    steps=(
        StepLine(0, "runner(x: float32[2, 4])", "returned float32[2, 4]"),
        StepLine(1, "runner(y: float32[2, 4])", "returned float32[2, 4]"),
    ),
    checks=(
        CheckLine(
            1, "first op sees the captured buffer", "buffer #1 (the static input)", "buffer #2 (a new array)", False
        ),
        CheckLine(
            1,
            "output equals the op chain applied to y",
            "[[0.5, 1.0, 1.5, 2.0], [2.5, 3.0, 3.5, 4.0]]",
            "[[0.5, 1.0, 1.5, 2.0], [2.5, 3.0, 3.5, 4.0]]",
            True,
        ),
    ),
    launches=(LaunchPoint(0, "capture", 3, 3), LaunchPoint(1, "replay", 1, 1)),
    duration_s=0.02,
)

PIECEWISE_TIMEOUT = CaseResult(
    spec="piecewise-segments",
    case="attention-runs-eagerly",
    tag="piecewise",
    status="timeout",
    score=0.0,
    max_score=2.0,
    message="The case did not finish within 10 s; is there a loop that never ends?",
    steps=(StepLine(0, "PiecewiseGraphRunner(ops, is_capturable=lambda i: i != 2)", "did not return (timed out)"),),
    duration_s=10.0,
)


def failing_report(name: str = "bob") -> Report:
    cases = []
    for row in SPEC_ROWS:
        for c in _passing_cases(row):
            if c.spec == "replay-one-launch" and c.case.endswith("-1"):
                cases.append(REPLAY_FAIL)
            elif c.spec == "static-input-buffer" and c.case.endswith("-2"):
                cases.append(STATIC_FAIL)
            elif c.spec == "piecewise-segments" and c.case.endswith("-1"):
                cases.append(PIECEWISE_TIMEOUT)
            elif c.spec == "decode-state-machine":
                cases.append(
                    replace(c, status="skipped", score=0.0, message="Skipped: InferenceGraphCapture is not defined.")
                )
            else:
                cases.append(c)
    return make_report(name, cases)


TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "cudagraph.py", line 42, in __call__\n'
    "    out = op(self.static_input)\n"
    f"ValueError: bad shape {SCRIPT} & <b>not bold</b>\n"
    "\x1b[31mred text\x1b[0m and a NUL\x00 and a bell\x07\n"
)


def crashing_report(name: str = "carol") -> Report:
    cases = []
    for row in SPEC_ROWS:
        for c in _passing_cases(row):
            if c.tag in ("launch-counter", "eager"):
                cases.append(c)
            else:
                cases.append(
                    replace(
                        c,
                        status="crashed",
                        score=0.0,
                        message=f"The worker process died (exit code -11) while running this case. {SCRIPT}",
                        steps=(StepLine(0, "runner(x: float32[4, 8])", "the process died"),),
                        output_tail=TRACEBACK,
                    )
                )
    return make_report(name, cases, problem="", output_tail="")


def hidden_report(name: str = "dave") -> Report:
    """A submission whose hidden padding case failed and was redacted, with leftovers everywhere."""
    cases = all_passing_cases()
    out = []
    for c in cases:
        if c.spec == "padding-capture-sizes" and c.case.endswith("-2"):
            out.append(
                CaseResult(
                    spec=c.spec,
                    case=SECRET_CASE_ID,
                    tag=c.tag,
                    status="failed",
                    score=0.0,
                    max_score=c.max_score,
                    message="A hidden padding case failed: check how a batch between two capture sizes is rounded.",
                    visibility="hidden",
                    description=f"pads {SECRET_INPUT} up to 8 rows",
                    redacted=True,
                    steps=(StepLine(0, f"runner(x: {SECRET_INPUT})", f"returned {SECRET_NUMBER}"),),
                    checks=(CheckLine(0, "output checksum", SECRET_NUMBER, "12", False),),
                    launches=(LaunchPoint(0, f"call {SECRET_NUMBER}", 1, 3),),
                    output_tail=f"debug: input {SECRET_INPUT} -> {SECRET_NUMBER}\n",
                    duration_s=0.05,
                )
            )
        else:
            out.append(c)
    return make_report(name, out)


def problem_report(name: str = "erin") -> Report:
    """cudagraph.py does not import: every case errors, the submission has a problem."""
    cases = [
        replace(c, status="error", score=0.0, message="Not run: cudagraph.py could not be imported.")
        for c in all_passing_cases()
    ]
    return make_report(
        name,
        cases,
        problem="cudagraph.py could not be imported: SyntaxError: invalid syntax (cudagraph.py, line 17)",
        output_tail='  File "cudagraph.py", line 17\n    def __call__(self x):\n                      ^\nSyntaxError: invalid syntax\n',
    )


def all_reports() -> list[Report]:
    return [passing_report(), failing_report(), crashing_report(), hidden_report(), problem_report()]


REPORT_IDS = ["passing", "failing", "crashing", "hidden", "problem"]


@pytest.fixture(params=list(range(len(REPORT_IDS))), ids=REPORT_IDS)
def any_report(request) -> Report:
    """Each sample in turn (import it into a test module to use it)."""
    return all_reports()[request.param]


# ------------------------------------------------------------------ the samples are fit for the tests that use them
def test_every_sample_reads_back_from_report_json_unchanged():
    for report in all_reports():
        data = json.loads(json.dumps(report_to_json(report)))
        assert report_from_json(data, f"sample {report.submission}") == report


def test_scores_add_up_as_the_grader_would_make_them():
    for report in all_reports():
        assert report.score == sum(c.score for c in report.cases)
        assert report.max_score == sum(c.max_score for c in report.cases)
        for spec in report.specs:
            mine = [c for c in report.cases if c.spec == spec.id]
            assert (
                mine and spec.score == sum(c.score for c in mine) and spec.max_score == sum(c.max_score for c in mine)
            )
        assert all(0 <= c.score <= c.max_score for c in report.cases)


def test_together_the_samples_show_every_status_a_page_must_render():
    assert {c.status for r in all_reports() for c in r.cases} == set(STATUSES)
    assert [r.submission for r in all_reports() if r.problem] == ["erin"]
    assert SCRIPT in crashing_report().cases[-1].output_tail and SCRIPT in crashing_report().cases[-1].message


def test_the_hidden_sample_holds_every_secret_where_a_careless_renderer_would_show_it():
    report = hidden_report()
    (redacted,) = [c for c in report.cases if c.redacted]
    assert redacted.visibility == "hidden" and redacted.status == "failed"
    staff_record = json.dumps(report_to_json(report))
    for secret in SECRETS:
        assert secret in staff_record, secret
    fields = [
        redacted.case,
        redacted.description,
        redacted.output_tail,
        *(s.action + s.outcome for s in redacted.steps),
        *(c.expected for c in redacted.checks),
    ]
    assert all(any(secret in field for field in fields) for secret in SECRETS)
    assert not any(secret in json.dumps(report_to_json(passing_report())) for secret in SECRETS)
