"""A regrade writes only what changed (issue 35, point 3): after one edit of the specs (a hint, a
title, a weight, a check, a case's steps, each alone), exactly the files whose bytes the edit changes are written
again, every other file keeps its bytes, inode and mtime, and the folder holds what a grading
into an empty folder writes. With nothing changed, nothing is written."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.commands import report_manifest
from grader.commands.grade import _write_outputs
from grader.judging.results import CaseResult, Report, SpecSummary
from reports.outputs import submission_files

ROOT = Path(__file__).resolve().parents[1]
SPEC_FILE = "01_launch_counter.yaml"
# (what to find in SPEC_FILE, once; what it becomes): each edit alone, of launch-counter-basics
EDITS = {
    "hint": ("bump's k defaults to 1.", "bump's k is 1 when it is not given."),
    "title": (
        "title: LaunchCounter counts launches, bumps by k and resets\n",
        "title: LaunchCounter counts launches, bumps by k and resets to zero\n",
    ),
    "weight": ("    points: 4\n    visibility: visible\n    explanation: >-\n      LaunchCounter is how",
               "    points: 5\n    visibility: visible\n    explanation: >-\n      LaunchCounter is how"),
    "check": ("value: {step: n_after_reset, equals: 0}", "value: {step: n_after_reset, equals: 1}"),
    # a case's steps: that case runs again, the rest is judged from the cache
    "steps": ("            as: n_after_reset\n",
              "            as: n_after_reset\n          - read: n\n            of: LaunchCounter\n"),
}  # fmt: skip
BATCH_FILES = ("summary.html", "grades.csv")

STAFF_FILES = submission_files()  # what grade writes for a submission in a staff's run (reports.outputs)


def _class(root: Path) -> list[Path]:
    """The reference, a correct variant and a copy whose reset() does nothing (it fails
    launch-counter-basics: its pages show that spec's hint, the others' do not)."""
    buggy = root / "buggy"
    buggy.mkdir(parents=True)
    source = (ROOT / "reference" / "cudagraph.py").read_text()
    assert source.count("        cls.n = 0\n") == 1
    (buggy / "cudagraph.py").write_text(source.replace("        cls.n = 0\n", "        pass\n", 1))
    return [ROOT / "reference", ROOT / "tests" / "correct_variants" / "minimal", buggy]


def _grade(subs: list[Path], out: Path, cache: Path, specs: Path) -> None:
    cmd = [sys.executable, "-P", "-m", "grader.commands.cli", "grade", *map(str, subs)]
    cmd += ["--out", str(out), "--cache", str(cache), "--specs", str(specs), "--no-similarity", "--jobs", "2"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def _specs(where: Path, edit: str | None) -> Path:
    specs = where / f"specs-{edit or 'base'}"
    if not specs.exists():
        shutil.copytree(ROOT / "specs", specs)
        if edit is not None:
            find, replace = EDITS[edit]
            text = (specs / SPEC_FILE).read_text()
            assert text.count(find) == 1, edit
            (specs / SPEC_FILE).write_text(text.replace(find, replace))
    return specs


def _snapshot(out: Path, names: list[str]) -> dict[str, tuple[int, int, bytes]]:
    """Each submission file and batch file: (inode, mtime in ns, bytes)."""
    files = [f"{n}/{f}" for n in names for f in (*STAFF_FILES, report_manifest.MANIFEST)] + list(BATCH_FILES)
    snap = {}
    for rel in files:
        st = os.stat(out / rel)
        snap[rel] = (st.st_ino, st.st_mtime_ns, (out / rel).read_bytes())
    return snap


def _rewritten(before: dict, after: dict) -> set[str]:
    """The submission files written again (a write makes a new inode: a temporary file renamed)."""
    return {rel for rel in before if "/" in rel and not rel.endswith(report_manifest.MANIFEST) and before[rel][:2] != after[rel][:2]}  # fmt: skip


def _changed(before: dict, after: dict) -> set[str]:
    return {rel for rel in before if "/" in rel and not rel.endswith(report_manifest.MANIFEST) and before[rel][2] != after[rel][2]}  # fmt: skip


@pytest.mark.slow
def test_a_regrade_writes_exactly_the_files_an_edit_changes(tmp_path):
    subs = _class(tmp_path / "class")
    names = ["reference", "minimal", "buggy"]
    out, cache = tmp_path / "out", tmp_path / "cache"
    _grade(subs, out, cache, _specs(tmp_path, None))  # cold: fills the cache
    base = _snapshot(out, names)
    _grade(subs, out, cache, _specs(tmp_path, None))  # nothing changed (the cache keeps the timings): nothing written
    assert _snapshot(out, names) | {b: base[b] for b in BATCH_FILES} == base
    for edit in EDITS:
        specs = _specs(tmp_path, edit)
        _grade(subs, out, cache, specs)
        after = _snapshot(out, names)
        _grade(subs, tmp_path / f"fresh-{edit}", cache, specs)  # the same grading into an empty folder
        fresh = _snapshot(tmp_path / f"fresh-{edit}", names)
        assert {rel: v[2] for rel, v in after.items()} == {rel: v[2] for rel, v in fresh.items()}, edit
        changed = _changed(base, after)
        assert _rewritten(base, after) == changed, edit  # every changed file written, no other
        assert changed, edit
        if edit == "hint":  # shown on the failing submission's pages only: most files stay as they were
            assert len(changed) < len(names) * len(STAFF_FILES) - 4, changed
        _grade(subs, out, cache, _specs(tmp_path, None))  # back to the base specs: the edit undone
        undone = _snapshot(out, names)
        assert {rel: v[2] for rel, v in undone.items()} == {rel: v[2] for rel, v in base.items()}, edit
        assert _rewritten(after, undone) == changed, edit
        base = undone
        if edit == "hint":  # shown where its spec fails: the buggy submission's page, not the others'
            assert "buggy/report.html" in changed and "reference/report.html" not in changed, changed


def _report(**changes) -> Report:
    spec = SpecSummary("s", "A spec", "core", 1.0, "visible", "why", "a hint", 1.0, 1.0)
    hidden = SpecSummary("h", "Hidden", "core", 1.0, "hidden", "", "", 0.0, 1.0)
    cases = (
        CaseResult("s", "a", "core", "passed", 1.0, 1.0, ""),
        CaseResult("h", "b", "core", "failed", 0.0, 1.0, "no", visibility="hidden", redacted=True),
    )
    return dataclasses.replace(Report("alice", 1.0, 2.0, cases, (spec, hidden)), **changes)


def _stats(out: Path) -> dict[str, tuple[int, int]]:
    return {f: (os.stat(out / f).st_ino, os.stat(out / f).st_mtime_ns) for f in STAFF_FILES}


def test_unchanged_inputs_write_nothing_and_a_damaged_folder_is_repaired(tmp_path):
    out = tmp_path / "alice"
    assert _write_outputs(_report(), out) == len(STAFF_FILES)
    first = {f: (out / f).read_bytes() for f in STAFF_FILES}
    stats = _stats(out)
    assert _write_outputs(_report(), out) == 0 and _stats(out) == stats
    # one file edited, one removed: those two are written again, from the same inputs
    (out / "report.html").write_text("edited")
    (out / "junit.xml").unlink()
    assert _write_outputs(_report(), out) == 2
    assert {f: (out / f).read_bytes() for f in STAFF_FILES} == first
    # a damaged manifest: every file rendered again and compared, none written, the manifest made anew
    stats = _stats(out)
    (out / report_manifest.MANIFEST).write_text("{not json")
    assert _write_outputs(_report(), out) == 0 and _stats(out) == stats
    assert _write_outputs(_report(), out) == 0  # and it vouches for them again
    # another option: only Gradescope's file shows hidden cases' visibility
    assert _write_outputs(_report(), out, "after_published") == 1
    assert _stats(out)["results.json"] != stats["results.json"]
    assert {f: v for f, v in _stats(out).items() if f != "results.json"} == {
        f: v for f, v in stats.items() if f != "results.json"
    }


def test_the_manifest_vouches_only_for_the_inputs_it_was_written_from(tmp_path):
    out = tmp_path / "alice"
    _write_outputs(_report(), out)
    digest = report_manifest.inputs_digest(_report(), "hidden", True)
    assert report_manifest.unchanged(out, digest, STAFF_FILES)
    for other in (_report(score=0.5), _report(problem="it did not import"), _report(path="x/alice")):
        assert not report_manifest.unchanged(out, report_manifest.inputs_digest(other, "hidden", True), STAFF_FILES)
    assert report_manifest.inputs_digest(_report(), "visible", True) != digest
    assert report_manifest.inputs_digest(_report(), "hidden", False) != digest
    # a link in a file's place is never vouched for (nor followed)
    (out / "junit.xml").unlink()
    (out / "junit.xml").symlink_to(tmp_path / "elsewhere.xml")
    assert not report_manifest.unchanged(out, digest, STAFF_FILES)
    assert _write_outputs(_report(), out) == 1 and not (out / "junit.xml").is_symlink()
    assert not (tmp_path / "elsewhere.xml").exists()
    # a FIFO or a link in the manifest's place: not read (never waited on), everything compared again
    for plant in (lambda m: os.mkfifo(m), lambda m: m.symlink_to(tmp_path / "elsewhere.json")):
        (out / report_manifest.MANIFEST).unlink()
        plant(out / report_manifest.MANIFEST)
        assert not report_manifest.unchanged(out, digest, STAFF_FILES)
        assert _write_outputs(_report(), out) == 0 and report_manifest.unchanged(out, digest, STAFF_FILES)


def test_the_manifest_vouches_for_the_texts_rendered_not_for_what_is_on_disk(tmp_path):
    """A file swapped in between the write and the manifest is never vouched for: the next
    regrade finds it differs and writes it again."""
    out = tmp_path / "alice"
    out.mkdir()
    digest = report_manifest.inputs_digest(_report(), "hidden", True)
    (out / "report.html").write_text("forged")
    report_manifest.record(out, digest, {"report.html": "rendered"})
    assert not report_manifest.unchanged(out, digest, ("report.html",))
    (out / "report.html").write_text("rendered")
    assert report_manifest.unchanged(out, digest, ("report.html",))


def test_a_student_kit_run_writes_no_manifest(tmp_path):
    out = tmp_path / "alice"
    assert _write_outputs(_report(), out, staff=False) == len(STAFF_FILES) - 1
    assert sorted(p.name for p in out.iterdir()) == sorted(f for f in STAFF_FILES if f != "staff.html")


def test_a_rejudge_spread_over_report_processes_writes_what_one_process_writes(tmp_path, monkeypatch):
    """A submission the cache holds whole is judged and written by a report process; the files
    and reports are those the grader's own process makes (judging there, as without a pool)."""
    import specs as specs_package
    from grader.commands import grade
    from grader.commands.report_writers import ReportWriters
    from grader.run.cache import ObservationCache
    from grader.run.runner import RunSettings, Zygote
    from grader.suite.loader import load_suite

    subs = [*_class(tmp_path / "class"), ROOT / "reference" / "mutants" / "counter_reset_noop.py"]  # one never cached
    cache = ObservationCache(tmp_path / "cache")
    judge = ReportWriters.judge
    apart: list[str] = []

    def counted(self, *args):
        outcome = judge(self, *args)
        if outcome is not None and outcome[0] is not None:
            apart.append(outcome[0][0].submission)
        return outcome

    def graded_into(out: Path):
        with Zygote() as zygote:
            loaded = load_suite(Path(specs_package.__file__).resolve().parent)
            return grade.grade_submissions(zygote, loaded, loaded.suite.specs, subs, out, RunSettings(), cache=cache)

    graded_into(tmp_path / "cold")  # fills the cache
    monkeypatch.setattr(ReportWriters, "judge", counted)
    apart_graded = graded_into(tmp_path / "apart")
    assert sorted(apart) == ["buggy", "minimal", "reference"]  # the mutant does not import: graded here
    monkeypatch.setattr(ReportWriters, "judge", lambda self, *args: None)  # every submission judged here
    here_graded = graded_into(tmp_path / "here")
    # the mutant runs (its import fails) every time: its timings differ, nothing else
    assert [g.report for g in apart_graded[:3]] == [g.report for g in here_graded[:3]]
    assert apart_graded[3].report.problem == here_graded[3].report.problem != ""
    assert not any(g.grader_failed for g in apart_graded)
    files = sorted(p.relative_to(tmp_path / "here") for p in (tmp_path / "here").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "apart") for p in (tmp_path / "apart").rglob("*") if p.is_file())
    assert len(files) > 4 * len(STAFF_FILES)
    for rel in (f for f in files if f.parts[0] != "counter_reset_noop"):
        assert (tmp_path / "apart" / rel).read_bytes() == (tmp_path / "here" / rel).read_bytes(), rel


def test_a_report_process_that_fails_to_write_costs_that_submission_only(tmp_path, monkeypatch):
    import specs as specs_package
    from grader.commands import grade
    from grader.run.cache import ObservationCache
    from grader.run.runner import RunSettings, Zygote
    from grader.suite.loader import load_suite

    subs = _class(tmp_path / "class")[1:]  # minimal, buggy
    cache = ObservationCache(tmp_path / "cache")

    def graded_into(out: Path):
        with Zygote() as zygote:
            loaded = load_suite(Path(specs_package.__file__).resolve().parent)
            specs = loaded.suite.only_visible().specs[:2]
            return grade.grade_submissions(zygote, loaded, specs, subs, out, RunSettings(), cache=cache)

    graded_into(tmp_path / "cold")
    real_write = grade._write_outputs

    def write(report, out_dir, *rest, **options):
        if report.submission == "buggy" and "grader failed" not in report.problem:
            raise RuntimeError("disk on fire")
        return real_write(report, out_dir, *rest, **options)

    monkeypatch.setattr(grade, "_write_outputs", write)
    from grader.commands.report_writers import ReportWriters

    judge, asked = ReportWriters.judge, []
    monkeypatch.setattr(ReportWriters, "judge", lambda self, *args: asked.append(judge(self, *args)) or asked[-1])
    minimal, buggy = graded_into(tmp_path / "out")
    assert len(asked) == 2 and all(outcome[0] is not None for outcome in asked)  # both judged in a report process
    assert not minimal.grader_failed and minimal.report.problem == ""
    assert buggy.grader_failed
    assert "writing its reports (RuntimeError: disk on fire)" in buggy.report.problem
    assert "disk on fire" in (tmp_path / "out" / "buggy" / "report.json").read_text()


def _counting_regrader(tmp_path: Path, monkeypatch, subs: list[Path] | None = None):
    """A grading of the reference and the buggy copy (or ``subs``) into one cache, as a function
    of the specs folder and the output folder, returning the uid of every case judged (one line
    per case, written by whichever process judged it)."""
    from grader.commands import grade
    from grader.judging import scoring
    from grader.run.cache import ObservationCache
    from grader.run.runner import RunSettings, Zygote
    from grader.suite.loader import load_suite

    subs = subs or _class(tmp_path / "class")[::2]  # the reference and the buggy copy
    cache = ObservationCache(tmp_path / "cache")
    calls = tmp_path / "judged.txt"
    real = scoring._case_result

    def counted(spec, case, *rest, **options):
        with open(calls, "a") as f:
            f.write(case.uid + "\n")
        return real(spec, case, *rest, **options)

    def regrade(specs_dir: Path, out: Path) -> list[str]:
        calls.write_text("")
        with Zygote() as zygote:
            loaded = load_suite(specs_dir)
            graded = grade.grade_submissions(zygote, loaded, loaded.suite.specs, subs, out, RunSettings(), cache=cache)
        assert not any(g.grader_failed for g in graded)
        return calls.read_text().split()

    monkeypatch.setattr(scoring, "_case_result", counted)
    return regrade


@pytest.mark.slow
def test_a_regrade_judges_only_the_specs_whose_inputs_changed(tmp_path, monkeypatch):
    """Each submission's manifest records what its report was judged from; a regrade from the
    cache judges again only the cases of specs whose text changed, none when nothing did (the
    same specs read from another folder included), and all of them when the code that judges
    and renders changed (a template, say: reports/ is in the renderers' digest)."""
    from grader.suite.loader import load_suite

    regrade = _counting_regrader(tmp_path, monkeypatch)
    base = _specs(tmp_path, None)
    n_cases = sum(len(s.cases) for s in load_suite(base).suite.specs)
    # the buggy copy's first cause (launch-counter-basics/reset-sets-zero) has no call step: a
    # traced re-run would observe what its run did, so none runs and no spec is judged twice
    # (the test below has a first cause that is re-run)
    out = tmp_path / "out"
    assert len(regrade(base, out)) == 2 * n_cases  # cold: every case judged, once
    assert regrade(base, out) == []  # nothing changed: nothing judged
    moved = tmp_path / "elsewhere" / "specs"
    shutil.copytree(base, moved)
    assert regrade(moved, out) == []  # the same specs in another folder: nothing judged
    # a report.json that is not what its manifest vouches for is never read back: that
    # submission is judged whole, and its file written again
    kept = (out / "buggy" / "report.json").read_text()
    (out / "buggy" / "report.json").write_text(kept.replace('"score": 0.0', '"score": 1.0', 1))
    judged = regrade(base, out)
    assert len(judged) == n_cases and (out / "buggy" / "report.json").read_text() == kept
    edited = load_suite(_specs(tmp_path, "check"))
    spec = next(s for s in edited.suite.specs if s.file.endswith(SPEC_FILE) and "n_after_reset" in repr(s))
    judged = regrade(_specs(tmp_path, "check"), out)
    # that spec's cases, in both submissions (the edit fails the reference in the same case, whose
    # re-run could locate nothing either)
    assert sorted(judged) == sorted([c.uid for c in spec.cases] * 2)
    fresh = tmp_path / "fresh"
    regrade(_specs(tmp_path, "check"), fresh)  # into an empty folder: all of it judged
    for rel in (f"{n}/{f}" for n in ("reference", "buggy") for f in STAFF_FILES):
        assert (out / rel).read_bytes() == (fresh / rel).read_bytes(), rel
    monkeypatch.setattr(report_manifest, "renderers_digest", lambda: "a template edited")
    from grader.commands import rejudging

    rejudging._BASES.clear()
    # every case judged again, once (both copies fail the edited check)
    assert len(regrade(_specs(tmp_path, "check"), out)) == 2 * n_cases


def test_what_a_report_is_judged_from_covers_every_input_of_judging():
    """A spec's digest changes with its text (a line included), the answers and each of its
    cases' frame, tail and time, and not with the folder its file was read from."""
    from grader.commands import rejudging
    from grader.suite.loader import load_suite

    specs = load_suite(ROOT / "specs").suite.specs[:2]
    cases = {c.uid: rejudging.case_digest(b"frame", "tail", 0.5) for s in specs for c in s.cases}
    fields = rejudging.report_fields("alice", "alice", "1", (), "", 1.0, "suite")

    def digests(specs=specs, cases=cases, answers=None, fields=fields):
        return rejudging.judged_digests(specs, cases, answers, fields)

    base = digests()
    uid = specs[0].cases[0].uid
    for other in (b"frame!", "tail!", 0.25):
        changed = rejudging.case_digest(*(other if isinstance(other, type(v)) else v for v in (b"frame", "tail", 0.5)))
        found = digests(cases={**cases, uid: changed})
        assert found.specs[0] != base.specs[0] and found.specs[1] == base.specs[1] and found.report != base.report
    assert digests(answers="cited").specs[0] != base.specs[0]
    moved = dataclasses.replace(specs[0], line=specs[0].line + 1)
    assert digests(specs=(moved, specs[1])).specs[0] != base.specs[0]
    elsewhere = dataclasses.replace(specs[0], file="/another/folder/" + Path(specs[0].file).name)
    assert digests(specs=(elsewhere, specs[1])) == base
    assert digests(fields=(*fields[:-1], "another suite")).specs == base.specs != ()
    assert digests(fields=(*fields[:-1], "another suite")).report != base.report
    assert digests(cases={k: v for k, v in cases.items() if k != uid}) is None  # a case with no frame: none


def test_the_cache_keeps_each_case_digest_beside_its_frame():
    """A regrade reads a stored case's digest from its entry, without decoding its frame; an
    entry an older grader stored, without one, gives the same digest from its frame."""
    from grader.commands import rejudging
    from grader.run.cache import case_entry
    from grader.run.runner import CaseRun

    entry = case_entry(CaseRun("s/a", "observed", None, "", "tail", 0.5, frame=b"frame"))
    expected = rejudging.case_digest(b"frame", "tail", 0.5)
    assert entry is not None and rejudging.stored_case_digest(entry) == expected
    older = {k: v for k, v in entry.items() if k != "digest"}
    assert rejudging.stored_case_digest(older) == expected
    assert rejudging.stored_case_digest({**older, "frame": "not base64!"}) is None
    assert rejudging.stored_case_digest({**entry, "frame": "not base64!"}) == expected  # not decoded
    assert rejudging.stored_case_digest({**entry, "digest": "zz" * 32}) == expected  # not hex: from the frame
    assert rejudging.stored_case_digest({**entry, "output_tail": None}) is None


@pytest.mark.slow
def test_a_regrade_of_a_later_spec_judges_only_it_when_the_first_cause_is_in_an_earlier_one(tmp_path, monkeypatch):
    """A copy that never replays (every call captures again) has its first cause in replay-basics,
    run before the state machine, whose cases call the runner: it is re-run traced. An edit of a
    spec run after it rejudges only that spec's cases, the failing submission's included: the
    traced re-run that locates its first cause is taken from the cache by case, not by position
    in the part of the run that was judged again."""
    from grader.suite.loader import load_suite

    no_replay = tmp_path / "class" / "no_replay"
    no_replay.mkdir(parents=True)
    source = (ROOT / "reference" / "cudagraph.py").read_text()
    lookup = "        entry = self.graphs.get(key)  # Constraint 1: one graph per shape\n"
    assert source.count(lookup) == 1
    (no_replay / "cudagraph.py").write_text(source.replace(lookup, "        entry = None\n", 1))
    regrade = _counting_regrader(tmp_path, monkeypatch, [ROOT / "reference", no_replay])
    base = _specs(tmp_path, None)
    out = tmp_path / "out"
    regrade(base, out)
    lead = json.loads((out / "no_replay" / "report.json").read_text())["first_cause"]["staff"]["case"]
    assert lead.startswith("replay-basics/"), lead
    later = tmp_path / "specs-later"
    shutil.copytree(base, later)
    find = "step_mode only reads the state: check enabled first"
    text = (later / "10_state_machine.yaml").read_text()
    assert text.count(find) == 1
    (later / "10_state_machine.yaml").write_text(
        text.replace(find, "step_mode only reads the state; check enabled first")
    )
    spec = next(
        s
        for s in load_suite(later).suite.specs
        if s.file.endswith("10_state_machine.yaml") and find.split(":")[0] in s.hint
    )
    judged = regrade(later, out)

    first = next(s for s in load_suite(later).suite.specs if s.id == lead.split("/")[0])
    # that spec's cases in both submissions, and the failing one's lead spec twice: from the first
    # run's frames (the report its lead is chosen from, as the cold run chose it) and from its
    # traced re-run, which the cache holds, to locate it: never the whole of a submission
    assert sorted(judged) == sorted([c.uid for c in spec.cases] * 2 + [c.uid for c in first.cases] * 2)
    fresh = tmp_path / "fresh"
    regrade(later, fresh)  # into an empty folder: all of it judged
    for rel in (f"{n}/{f}" for n in ("reference", "no_replay") for f in STAFF_FILES):
        assert (out / rel).read_bytes() == (fresh / rel).read_bytes(), rel


@pytest.mark.slow
def test_a_new_first_cause_in_a_call_case_runs_only_its_traced_rerun(tmp_path, monkeypatch):
    """A check's edit that fails the reference in a case with a call step makes that case the
    lead of a new first cause, whose traced re-run the cache does not hold. The report process
    judges the edited spec and hands the rest back (grader.commands.rejudging.ToLocate): only the
    traced re-run runs, only the lead's spec is judged once more to locate it, never the whole of
    a submission; the files are those a grading into an empty folder writes, and the next regrade
    finds the traced re-run in the cache."""
    from grader.commands import grade
    from grader.suite.loader import load_suite

    regrade = _counting_regrader(tmp_path, monkeypatch)
    reruns: list[tuple[str, ...]] = []
    real_rerun = grade.rerun_traced

    def rerun(zygote, area, slot, submission, cases, settings, uids, *rest):
        reruns.append(uids)
        return real_rerun(zygote, area, slot, submission, cases, settings, uids, *rest)

    monkeypatch.setattr(grade, "rerun_traced", rerun)
    base = _specs(tmp_path, None)
    out = tmp_path / "out"
    regrade(base, out)
    before = tmp_path / "before"
    shutil.copytree(out, before)
    edited = tmp_path / "specs-eager"
    shutil.copytree(base, edited)
    find = "          - launches: {step: out, equals: 3}\n          - output: {step: out, oracle: true, shape: [4, 8]"
    text = (edited / "02_eager.yaml").read_text()
    assert text.count(find) == 1
    (edited / "02_eager.yaml").write_text(text.replace(find, find.replace("equals: 3", "equals: 4")))
    spec = next(s for s in load_suite(edited).suite.specs if s.id == "eager-basics")
    assert any(step.action == "call" for step in spec.cases[0].steps)
    reruns.clear()
    judged = regrade(edited, out)
    # the spec in both submissions, and once more in the reference, to locate its new first cause;
    # and the buggy copy's first cause's spec, judged again from its first run (rejudging.reusable)
    first = next(s for s in load_suite(edited).suite.specs if s.id == "launch-counter-basics")
    assert sorted(judged) == sorted([c.uid for c in spec.cases] * 3 + [c.uid for c in first.cases])
    assert reruns == [("eager-basics/three-ops-three-launches",)]
    fresh = tmp_path / "fresh"
    assert len(regrade(edited, fresh)) >= 2 * sum(len(s.cases) for s in load_suite(edited).suite.specs)
    for rel in (f"{n}/{f}" for n in ("reference", "buggy") for f in STAFF_FILES):
        assert (out / rel).read_bytes() == (fresh / rel).read_bytes(), rel
    # the same edit, from the folder as it was before it: the traced re-run is the cache's now
    reruns.clear()
    assert sorted(regrade(edited, before)) == sorted(judged) and reruns == []
    for rel in (f"{n}/{f}" for n in ("reference", "buggy") for f in STAFF_FILES):
        assert (before / rel).read_bytes() == (out / rel).read_bytes(), rel
