"""Which failed cases a submission's traced re-run takes (issue 34 point 3, issue 35 point 1):
only those whose re-run can observe something their first run did not. A case with no call step
runs traced exactly as it ran (a probe's lines are traced in the first run already), unless it
builds an object with an argument the contract makes another value of (lab.yaml: at_least), so a
submission whose first cause is such a case pays no second worker, and its report is the same."""

from __future__ import annotations

import pytest
from support.reruns import count_reruns
from support.shipped import shipped_suite

import grader.commands.grade as grade_module
from grader.run.relocating import traced
from grader.run.runner import RunSettings, Zygote
from reference.mutants._base import REFERENCE_SOURCE

LOADED = shipped_suite()


def test_a_case_without_a_call_step_runs_traced_as_it_ran():
    by_tag = {spec.tag: spec.cases for spec in LOADED.suite.specs}
    answers = by_tag["notebook-answers"]
    assert answers and all(traced(case) == case for case in answers)
    assert any(traced(case) != case for case in by_tag["single-launch-replay"])


def test_a_state_machine_case_is_re_run_only_when_built_with_an_argument_the_contract_changes():
    # InferenceGraphCapture(0): lab.yaml's at_least makes it 1, so where the values its tests
    # compared were stored can tell the cause (tests/test_relocating_stored.py): every step that
    # runs the submission's code is traced again; InferenceGraphCapture(1) is left as it ran
    cases = {case.uid: case for case in LOADED.suite.cases}
    zero = cases["state-machine-basics/zero-warmup-means-one"]
    assert [s.args[0].value for s in zero.steps if s.action == "build"] == [0]
    assert [s.trace_call for s in traced(zero).steps] == [True] * len(zero.steps)
    assert {s.action for s in zero.steps} == {"build", "method"}
    plain = cases["state-machine-basics/disabled-by-default"]
    assert [s.args[0].value for s in plain.steps if s.action == "build"] == [1]
    assert traced(plain) == plain


@pytest.mark.slow
def test_a_first_cause_no_trace_can_locate_costs_no_re_run(tmp_path, monkeypatch):
    # the reference without answers.md: every case passes but the notebook answers', whose
    # steps are probes: it is the first cause, and re-running it traced would observe the same
    folder = tmp_path / "subs" / "no_answers"
    folder.mkdir(parents=True)
    (folder / "cudagraph.py").write_text(REFERENCE_SOURCE.read_text(encoding="utf-8"), encoding="utf-8")
    reran = count_reruns(monkeypatch)
    specs = tuple(s for s in LOADED.suite.specs if s.tag in ("notebook-answers", "warmup"))
    with Zygote() as zygote:
        [graded] = grade_module.grade_submissions(zygote, LOADED, specs, [folder], tmp_path / "out", RunSettings())
    failed = [c for c in graded.report.cases if c.status == "failed"]
    assert failed and {c.tag for c in failed} == {"notebook-answers"}
    assert graded.report.first_cause.staff is not None
    assert reran == []
