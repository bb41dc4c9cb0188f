"""A failed submission's first-cause cases re-run with every runner's call traced (issue 34,
point 3; grader.run.relocating): the test that chose a call's path is named, verdicts and scores
stay the first run's, and a passing submission is never re-run."""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path

import pytest
from support.reruns import count_reruns
from support.shipped import shipped_suite
from test_reports_samples import all_passing_cases, make_report

import grader.commands.grade as grade_module
from grader.judging.first_cause import MAX_RELOCATED, first_cause, relocated, to_relocate
from grader.judging.judge import judge_case
from grader.observe.interpreter import observe_in_process
from grader.run.relocating import traced
from grader.run.runner import RunSettings, Zygote
from reference.mutants._base import REFERENCE_SOURCE, apply_edits

ROOT = Path(__file__).resolve().parents[1]
LOADED = shipped_suite()
CASES = {case.uid: case for case in LOADED.suite.cases}
OFF_BY_ONE = importlib.import_module("reference.mutants.warmup_off_by_one").EDITS
UID = "warmup-basics/one-warmup-call"  # warms up twice: num_captured is 0 where 1 was captured


def _mutant(folder: Path) -> tuple[Path, int]:
    """The warm-up off-by-one mutant in ``folder``, and the line of its wrong test."""
    source = apply_edits(REFERENCE_SOURCE.read_text(encoding="utf-8"), OFF_BY_ONE, "test")
    folder.mkdir(parents=True)
    (folder / "cudagraph.py").write_text(source, encoding="utf-8")
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "if done <= self.warmup_steps:" in text)
    return folder, line


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(f"relocating_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_traced_call_notes_the_test_that_chose_its_path_and_is_judged_alike(tmp_path):
    folder, line = _mutant(tmp_path / "m")
    module = _module(folder / "cudagraph.py")
    case, oracle = CASES[UID], LOADED.oracles[UID]
    first = judge_case(case, oracle, observe_in_process(module, UID, case.steps))
    again = judge_case(case, oracle, observe_in_process(module, UID, traced(case).steps))
    assert first.status == again.status == "failed"
    assert first.message.split("\n")[0] == again.message.split("\n")[0]
    assert first.origin != f"cudagraph.py:{line}", first.message  # a first run does not trace the calls
    assert again.origin == f"cudagraph.py:{line}", again.message
    assert f"decided at cudagraph.py:{line} in _warming_up" in again.message


def _failing(case, origin, message, **kw):
    return replace(case, status="failed", score=0.0, message=message, cause="launches", origin=origin, **kw)


def _reports():
    cases = all_passing_cases()
    at = next(i for i, c in enumerate(cases) if c.visibility == "visible" and c.tag == "single-launch-replay")
    first = _failing(cases[at], "cudagraph.py:42", "Step 2: should cost 1 launch but cost 3.\n  at cudagraph.py:42")
    better = replace(
        first, origin="cudagraph.py:7", message="Step 2: should cost 1 launch but cost 3.\n  at cudagraph.py:7"
    )
    report = make_report("alice", [*cases[:at], first, *cases[at + 1 :]])
    report = replace(report, first_cause=first_cause(report))
    return report, cases, at, better


def test_only_a_failed_submission_is_re_run_and_only_its_first_causes_cases():
    passing = make_report("bob", all_passing_cases())
    assert to_relocate(passing) == ()
    report, cases, at, _ = _reports()
    assert to_relocate(report) == (f"{cases[at].spec}/{cases[at].case}",)
    assert len(to_relocate(report)) <= MAX_RELOCATED


def test_a_re_run_moves_only_the_location_and_never_a_verdict():
    report, cases, at, better = _reports()
    uid = f"{cases[at].spec}/{cases[at].case}"
    traced_report = make_report("alice", [*cases[:at], better, *cases[at + 1 :]])
    moved = relocated(report, traced_report, (uid,))
    assert moved.first_cause.staff.line == 7 and moved.cases[at].origin == "cudagraph.py:7"
    assert [(c.status, c.score) for c in moved.cases] == [(c.status, c.score) for c in report.cases]
    # judged otherwise in the re-run (here: another score): its first location stays
    otherwise = make_report("alice", [*cases[:at], replace(better, score=0.5), *cases[at + 1 :]])
    kept = relocated(report, otherwise, (uid,))
    assert kept.first_cause.staff.line == 42 and kept.cases[at] == report.cases[at]


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["module", "process"])
def test_grading_names_the_decision_and_passing_costs_no_re_run(tmp_path, monkeypatch, isolation):
    folder, line = _mutant(tmp_path / "subs" / "mutant")
    passing = tmp_path / "subs" / "reference"
    passing.mkdir()
    (passing / "cudagraph.py").write_text(REFERENCE_SOURCE.read_text(encoding="utf-8"), encoding="utf-8")
    reran = count_reruns(monkeypatch)
    specs = tuple(s for s in LOADED.suite.specs if s.tag == "warmup")
    settings = RunSettings(isolation=isolation)
    with Zygote() as zygote:
        graded = grade_module.grade_submissions(zygote, LOADED, specs, [folder, passing], tmp_path / "out", settings)
        monkeypatch.setattr(grade_module, "to_relocate", lambda report: ())
        [untraced] = grade_module.grade_submissions(zygote, LOADED, specs, [folder], tmp_path / "out2", settings)
    mutant, reference = graded
    assert reran == ["mutant"]  # the passing reference is never re-run
    assert reference.report.score == reference.report.max_score
    assert mutant.report.first_cause.staff.line == line, mutant.report.first_cause
    assert untraced.report.first_cause.staff.line != line
    assert [(c.status, c.score) for c in mutant.report.cases] == [(c.status, c.score) for c in untraced.report.cases]
    assert mutant.report.score == untraced.report.score


def test_the_decision_is_a_running_function_s_or_a_predicate_s_test_never_a_helper_s(tmp_path):
    # the second shape should warm up too: the capture it made was chosen by _warming_up's test,
    # not by _load's shape test, which ran later but chose no path (its helper returned None)
    edits = importlib.import_module("reference.mutants.warmup_counted_globally").EDITS
    source = apply_edits(REFERENCE_SOURCE.read_text(encoding="utf-8"), edits, "test")
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "cudagraph.py").write_text(source, encoding="utf-8")
    uid = "warmup-basics/second-shape-warms-up-too"
    case, oracle = CASES[uid], LOADED.oracles[uid]
    verdict = judge_case(case, oracle, observe_in_process(_module(folder / "cudagraph.py"), uid, traced(case).steps))
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "if done < self.warmup_steps:" in text)
    assert verdict.status == "failed" and "num_captured" in verdict.message, verdict.message
    # the object's launches are wrong too and a call built its graphs: that call's decision
    assert verdict.origin == f"cudagraph.py:{line}", verdict.message
    assert "in _load" not in verdict.message


def test_only_a_re_run_s_message_marks_its_calls_traced():
    from grader import framing

    case = CASES[UID]
    assert b"trace_call" not in framing.case_message(case.uid, case.steps)  # a first run's message is as before
    _, steps = framing.read_case_message(framing.case_message(case.uid, traced(case).steps))
    assert [s.trace_call for s in steps] == [s.action == "call" for s in case.steps]
    assert any(s.trace_call for s in steps)


class _CountingZygote(Zygote):
    """A zygote that counts the workers it starts."""

    def __init__(self) -> None:
        super().__init__()
        self.started = 0

    def spawn(self, request, fds):
        self.started += 1
        return super().spawn(request, fds)


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["module", "process"])
def test_a_regrade_of_an_unchanged_submission_starts_no_worker_for_its_traced_re_run(tmp_path, isolation):
    """The traced re-run's observations live in the observation cache beside the first run's: a
    regrade judges both from it, in a report process (two submissions) or in the grader's own
    (one), and names the same line, starting no worker at all."""
    from grader.run.cache import ObservationCache

    folder, line = _mutant(tmp_path / "subs" / "mutant")
    passing = tmp_path / "subs" / "reference"
    passing.mkdir()
    (passing / "cudagraph.py").write_text(REFERENCE_SOURCE.read_text(encoding="utf-8"), encoding="utf-8")
    specs = tuple(s for s in LOADED.suite.specs if s.tag == "warmup")
    settings = RunSettings(isolation=isolation)
    cache = ObservationCache(tmp_path / "cache")
    with _CountingZygote() as zygote:

        def grade(subs, out):
            before = zygote.started
            graded = grade_module.grade_submissions(zygote, LOADED, specs, subs, tmp_path / out, settings, cache=cache)
            return graded, zygote.started - before

        [cold, _], started_cold = grade([folder, passing], "cold")
        [warm, _], started_warm = grade([folder, passing], "warm")  # judged in report processes
        [alone], started_alone = grade([folder], "alone")  # judged in the grader's process
    assert started_cold > 0 and cold.report.first_cause.staff.line == line, cold.report.first_cause
    assert (started_warm, started_alone) == (0, 0)
    for regraded in (warm, alone):
        assert regraded.report.first_cause == cold.report.first_cause
        assert regraded.report.cases == cold.report.cases


def _judged(mutant: str, uid: str, trace: bool):
    """The verdict of case ``uid`` on a reference mutant, run as a first run or as a traced re-run,
    with the mutant's source lines."""
    import tempfile

    edits = importlib.import_module(f"reference.mutants.{mutant}").EDITS
    source = apply_edits(REFERENCE_SOURCE.read_text(encoding="utf-8"), edits, "test")
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "cudagraph.py"
        path.write_text(source, encoding="utf-8")
        case, oracle = CASES[uid], LOADED.oracles[uid]
        steps = traced(case).steps if trace else case.steps
        return judge_case(case, oracle, observe_in_process(_module(path), uid, steps)), source.splitlines()


def _failed_line(verdict, cause: str):
    return next(line for line in verdict.checks if not line.passed and line.cause == cause)


def test_a_replay_that_captured_instead_names_the_test_that_chose_the_capture():
    # never looks its graph up: the second call captures again (three launches) where a replay
    # was due, on the path the warm-up test chose once warm-up was over
    verdict, lines = _judged("never_cache", "replay-basics/capture-then-one", trace=True)
    test = next(i for i, text in enumerate(lines, 1) if "if done < self.warmup_steps:" in text)
    assert _failed_line(verdict, "launches").line == test, verdict.message
    assert f"decided at cudagraph.py:{test} in _warming_up" in verdict.message
    first, _ = _judged("never_cache", "replay-basics/capture-then-one", trace=False)
    assert _failed_line(first, "launches").line != test  # a first run does not trace the call
    # a replay that replays but pays one launch per op: no capture, so its own run_eager call
    verdict, lines = _judged("replay_launches_every_op", "replay-basics/capture-then-one", trace=True)
    call = next(i for i, text in enumerate(lines, 1) if "y = run_eager(self.ops, entry.static_input)" in text)
    assert _failed_line(verdict, "launches").line == call, verdict.message


def test_a_wrong_output_names_the_line_that_made_it_following_returns_that_hand_on():
    # run_eager applies each op to the input, not to the last result: its `return y` made it
    verdict, lines = _judged("eager_does_not_chain", "eager-basics/three-ops-three-launches", trace=True)
    made = next(i for i, text in enumerate(lines, 1) if text == "    return y")
    assert _failed_line(verdict, "output").line == made, verdict.message
    first, _ = _judged("eager_does_not_chain", "eager-basics/three-ops-three-launches", trace=False)
    assert _failed_line(first, "output").line == 0  # untraced: no line
    # returned padded rows: __call__ returns what _replay/_capture return, which return what
    # _real_rows made: that line, not the first `return` the call ran
    verdict, lines = _judged("padding_no_slice", "padding-basics/round-up", trace=True)
    made = next(i for i, text in enumerate(lines, 1) if "return np.array(output, copy=True)  # should slice" in text)
    assert _failed_line(verdict, "output").line == made, verdict.message
    # a replay that hands _real_rows the entry's stored output: handed on there, not made inside
    verdict, lines = _judged("stale_output_on_replay", "static-buffer-edge/mutated-output-then-replay", trace=True)
    handed = next(i for i, text in enumerate(lines, 1) if "return self._real_rows(entry.output, x)" in text)
    assert _failed_line(verdict, "output").line == handed, verdict.message


def test_a_raise_on_a_path_chosen_by_the_key_due_keeps_its_own_line():
    # a replay that copies the input unpadded raises where the batch is padded; its path was
    # chosen by the lookup's test on the key helper's value, which is the key due: the raise
    # line is named, never the key helper, though a traced re-run notes that decision (a wrong
    # key raises on the same path: test_relocating_decisions names the key there)
    import tempfile

    source = REFERENCE_SOURCE.read_text(encoding="utf-8").replace(
        "        self._load(entry.static_input, x)\n", "        np.copyto(entry.static_input, x)  # unpadded\n"
    )
    uid = "padding-basics/padded-rows-zeroed"
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "cudagraph.py"
        path.write_text(source, encoding="utf-8")
        case, oracle = CASES[uid], LOADED.oracles[uid]
        verdict = judge_case(case, oracle, observe_in_process(_module(path), uid, traced(case).steps))
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "# unpadded" in text)
    assert verdict.status == "failed" and "raised ValueError" in verdict.message, verdict.message
    assert verdict.origin == f"cudagraph.py:{line}", verdict.message


def test_a_capture_where_a_replay_was_due_names_the_key_a_lookup_on_its_path_missed_by():
    # keyed on the real batch size, not the padded one: a batch that pads to a captured size
    # misses its graph and captures again; its key is right, the capture before it keyed its
    # graph by the real batch, (3, 8): the key helper's return that made it is named
    verdict, lines = _judged("padding_key_unpadded", "padding-basics/round-up", trace=True)
    made = next(i for i, text in enumerate(lines, 1) if "return x.shape  # should be the padded shape" in text)
    assert _failed_line(verdict, "launches").line == made, verdict.message
    # the replay's own key is the one due: the capture before it stored its graph under (3, 8)
    assert "step 2 chose its path by a key other than its own" in verdict.message
    assert "(the key [3, 8] the path was chosen by; the key due: [4, 8])" in verdict.message
    assert "then decided at" in verdict.message and "in _warming_up: if done < self.warmup_steps:" in verdict.message


@pytest.mark.slow
def test_a_re_run_is_judged_only_in_the_specs_of_the_cases_it_relocates(tmp_path, monkeypatch):
    """relocated() reads of the re-run's report only the relocated cases: the specs that hold
    none of them are not judged a second time, and the report is the one a full judging of the
    re-run gives (the location moved, the verdicts the first run's)."""
    import grader.judging.scoring as scoring

    folder, line = _mutant(tmp_path / "subs" / "mutant")
    specs = tuple(s for s in LOADED.suite.specs if s.tag == "warmup" or s.id == "launch-counter-basics")
    assert len(specs) >= 2
    judged: list[str] = []
    real_judge = scoring.judge_case

    def counted(case, *rest):
        judged.append(case.uid)
        return real_judge(case, *rest)

    relocating: list[tuple[str, ...]] = []
    real_to_relocate = grade_module.to_relocate

    def noted(report):
        uids = real_to_relocate(report)
        relocating.append(tuple(uids))
        return uids

    monkeypatch.setattr(scoring, "judge_case", counted)
    monkeypatch.setattr(grade_module, "to_relocate", noted)
    with Zygote() as zygote:
        [graded] = grade_module.grade_submissions(zygote, LOADED, specs, [folder], tmp_path / "out", RunSettings())
    [uids] = relocating
    assert uids
    touched = [s for s in specs if any(c.uid in uids for c in s.cases)]
    assert len(touched) < len(specs)  # a spec none of whose cases is relocated
    first = [c.uid for s in specs for c in s.cases]
    again = [c.uid for s in touched for c in s.cases]
    assert judged == first + again  # the first judging whole, the re-run's only in the touched specs
    assert graded.report.first_cause.staff.line == line, graded.report.first_cause
