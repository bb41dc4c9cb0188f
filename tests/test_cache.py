"""The observation cache (grader.run.cache): a regrade judges stored observations without running
anything, and its reports are those of a cold run; a check's edit rejudges from the cache, a
step's edit reruns only the cases it changed; broken or foreign entries are ignored and rerun;
the directory is private to the grader's user."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.shipped import shipped_suite

from grader.errors import UsageError
from grader.run.cache import FORMAT, MAX_CACHED_FRAME, ObservationCache, case_entry, submission_hash, within_budget
from grader.run.runner import CaseRun

ROOT = Path(__file__).resolve().parents[1]
# the reference, a correct variant, a buggy copy (made below) and one that cannot import (a
# mutant needs the trusted `reference` package): its cases are never cached, and run every time
SUBMISSIONS = [ROOT / "reference", ROOT / "tests" / "correct_variants" / "minimal"]
NAMES = ["reference", "minimal", "buggy", "counter_reset_noop"]
BROKEN = ROOT / "reference" / "mutants" / "counter_reset_noop.py"
N_CASES = sum(len(spec.cases) for spec in shipped_suite().suite.specs)  # the shipped suite's
CACHED = 3 * N_CASES
TIMING = ("duration_s", "execution_time")


def grade(out: Path, cache: Path, specs: Path | None = None, *extra: str) -> tuple[int, int, int]:
    """Run ``graphgrade grade``; returns the cache's (hits, total, ignored)."""
    buggy = out.parent / "buggy"
    if not buggy.exists():
        buggy.mkdir()
        source = (ROOT / "reference" / "cudagraph.py").read_text()
        (buggy / "cudagraph.py").write_text(source.replace("        cls.n = 0\n", "        pass\n", 1))
    cmd = [
        sys.executable,
        "-m",
        "grader.commands.cli",
        "grade",
        *map(str, SUBMISSIONS),
        str(buggy),
        str(BROKEN),
        "--out",
        str(out),
        "--cache",
        str(cache),
        *extra,
    ]
    if specs is not None:
        cmd += ["--specs", str(specs)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    line = re.search(r"cache: (\d+) of (\d+) cases judged from .*?\((\d+) run(?:, (\d+) unreadable)?", result.stderr)
    assert line, result.stderr
    return int(line[1]), int(line[2]), int(line[4] or 0)


def untimed(obj):
    if isinstance(obj, dict):
        return {k: untimed(v) for k, v in obj.items() if k not in TIMING}
    if isinstance(obj, list):
        return [untimed(v) for v in obj]
    return obj


def outputs(out: Path) -> dict[str, object]:
    """The files a regrade must reproduce, timing and the graded paths aside (tests grade copies
    made beside each output folder, so the same submission is graded from another path)."""
    found: dict[str, object] = {"grades.csv": "".join(_without_path_column((out / "grades.csv").read_text()))}
    for name in NAMES:
        report = untimed(json.loads((out / name / "report.json").read_text()))
        report.pop("path", None)
        found[name] = report
        found[name + "/results.json"] = untimed(json.loads((out / name / "results.json").read_text()))
    return found


def _without_path_column(csv_text: str) -> list[str]:
    rows = csv_text.splitlines(keepends=True)
    column = rows[0].split(",").index("path")
    return [",".join(c for i, c in enumerate(row.split(",")) if i != column) for row in rows]


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cache")
    cache = tmp / "cache"
    hits, total, _ = grade(tmp / "cold", cache)
    assert hits == 0 and total == 4 * N_CASES
    shutil.copytree(cache, tmp / "cold-cache")  # as the cold run left it (the tests below add to `cache`)
    return tmp, cache


def test_a_regrade_runs_nothing_and_writes_the_cold_run_s_reports(cold):
    tmp, cache = cold
    hits, total, ignored = grade(tmp / "warm", cache)
    assert (hits, total, ignored) == (CACHED, 4 * N_CASES, 0)
    assert outputs(tmp / "warm") == outputs(tmp / "cold")
    assert (tmp / "warm" / "summary.html").read_text() == (tmp / "cold" / "summary.html").read_text()


def _edited_specs(tmp: Path, old: str, new: str, name: str) -> Path:
    specs = tmp / name
    shutil.copytree(ROOT / "specs", specs)
    path = specs / "01_launch_counter.yaml"
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))
    return specs


def test_editing_a_check_rejudges_from_the_cache(cold):
    tmp, cache = cold
    specs = _edited_specs(
        tmp, "value: {step: n_after_reset, equals: 0}", "value: {step: n_after_reset, equals: 7}", "check-edit"
    )
    hits, total, _ = grade(tmp / "check-edit-out", cache, specs)
    assert hits == CACHED  # nothing ran (but the submission that cannot import)
    report = json.loads((tmp / "check-edit-out" / "reference" / "report.json").read_text())
    case = next(c for c in report["cases"] if c["case"] == "reset-sets-zero")
    assert case["status"] == "failed"  # judged again against the new expectation


def test_editing_one_case_s_steps_reruns_that_case_only(cold):
    tmp, cache = cold
    old = "            args: [5]\n          - method: reset\n            of: LaunchCounter\n          - read: n"
    specs = _edited_specs(tmp, old, old.replace("[5]", "[6]"), "steps-edit")
    hits, total, _ = grade(tmp / "steps-edit-out", cache, specs)
    assert hits == CACHED - 3  # one case reran, for each of the three submissions that import
    edited, cold_out = outputs(tmp / "steps-edit-out"), outputs(tmp / "cold")
    assert edited["grades.csv"] == cold_out["grades.csv"]  # same verdicts: reset still resets
    for name in NAMES:
        assert [c["status"] for c in edited[name]["cases"]] == [c["status"] for c in cold_out[name]["cases"]]
    case = next(c for c in edited["reference"]["cases"] if c["case"] == "reset-sets-zero")
    assert "6" in json.dumps(case["steps"]) and "5" not in json.dumps(case["steps"][0])  # the new steps ran


def test_corrupted_and_foreign_entries_are_ignored_and_rerun(cold, tmp_path):
    """On a copy of the cache as the cold run wrote it (not a cold run of its own). A damaged or
    foreign submission file costs all its cases; a damaged case entry costs that case alone."""
    tmp, _ = cold
    cache = tmp_path / "cache"
    shutil.copytree(tmp / "cold-cache", cache)
    files = sorted((cache / f"v{FORMAT}").rglob("*.json"))
    comparisons = [p for p in files if '\\"details\\"' in p.read_text()]  # the batch's similarity
    assert len(comparisons) == (1 if importlib.util.find_spec("copydetect") else 0)
    traced = [p for p in files if json.loads(p.read_text()).get("traced") is True]  # a failed one's re-run
    # none: the buggy copy's first cause (reset-sets-zero) has no call step, so its traced re-run
    # would run as it ran and none is run or kept (tests/test_relocating_leads.py); the others pass
    assert traced == []
    submissions = [p for p in files if p not in comparisons and p not in traced]
    assert len(submissions) == 3  # one per submission that imports, whatever its number of cases
    stored = [json.loads(p.read_text()) for p in submissions]
    assert all(len(entry["cases"]) == N_CASES for entry in stored)  # every case was observed and kept
    truncated, foreign, damaged = submissions
    truncated.write_text(truncated.read_text()[:-40])
    foreign.write_text(json.dumps(stored[2]))  # another submission's file, filed under this key
    entry = stored[2]
    first, second, third = list(entry["cases"])[:3]
    entry["cases"][first] = entry["cases"][second]  # another case's entry, under this case's key
    # a frame that no longer decodes (its magic zeroed; zeroing its tail may only zero array data)
    entry["cases"][third]["frame"] = "AAAAAAAA" + entry["cases"][third]["frame"][8:]
    damaged.write_text(json.dumps(entry))
    hits, total, ignored = grade(tmp_path / "second", cache)
    assert (hits, ignored) == (CACHED - 2 * N_CASES - 2, 2 * N_CASES + 2)
    assert outputs(tmp_path / "second") == outputs(tmp / "cold")
    hits, total, ignored = grade(tmp_path / "third", cache)  # rewritten by the rerun
    assert (hits, ignored) == (CACHED, 0)


@pytest.mark.slow
def test_no_cache_runs_everything_and_writes_no_cache(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "grade", str(SUBMISSIONS[0]), "--out", str(tmp_path / "o"), "--no-cache", "--visibility", "visible"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "cache:" not in result.stderr
    assert not (tmp_path / "xdg").exists()


def test_the_cache_directory_is_private(tmp_path):
    cache = ObservationCache(tmp_path / "new")
    st = os.stat(cache.dir)
    assert st.st_mode & 0o777 == 0o700 and st.st_uid == os.geteuid()
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    ObservationCache(shared)
    assert os.stat(shared).st_mode & 0o777 == 0o700  # made private
    if os.geteuid() == 0:  # a directory another user owns (a worker's uid could) is refused
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, 61999, 61999)
        with pytest.raises(UsageError, match="--cache"):
            ObservationCache(foreign)


def test_a_sandboxed_worker_cannot_read_the_cache(tmp_path):
    """The cache is outside everything a worker may read; as another uid, it cannot even list it."""
    if os.geteuid() != 0:
        pytest.skip("workers run as another uid only when grading as root")
    cache = ObservationCache(tmp_path / "c")
    (cache.dir / "probe").write_text("hidden")
    probe = subprocess.run(
        [sys.executable, "-c", f"import os; os.setgid(61998); os.setuid(61998); open({str(cache.dir / 'probe')!r}).read()"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert probe.returncode != 0 and "PermissionError" in probe.stderr


def _observed(uid: str, frame: bytes, tail: str = "") -> CaseRun:
    return CaseRun(
        uid=uid, status="observed", observation=None, message="", output_tail=tail, duration_s=0.5, frame=frame
    )


def test_only_observed_cases_with_a_bounded_frame_are_kept():
    assert case_entry(_observed("a", b"xyz"))["case"] == "a"
    assert case_entry(_observed("a", b"x" * (MAX_CACHED_FRAME + 1))) is None  # runs again on each regrade
    assert case_entry(_observed("a", b"")) is None
    assert case_entry(CaseRun.not_run("a", "timeout", "timed out")) is None


def test_a_submission_file_keeps_this_run_s_cases_first_and_stays_within_its_budget(monkeypatch):
    entries = {k: {"case": k, "frame": "f" * 100, "output_tail": ""} for k in ("old1", "new1", "old2", "new2")}
    entries["junk"] = ["not", "an", "entry"]
    assert list(within_budget(entries, ["new1", "new2"])) == ["new1", "new2", "old1", "old2"]
    entries["old3"] = entries["old1"]
    assert list(within_budget(entries, ["new1", "new2"])) == ["new1", "new2", "old1", "old2"]  # as many others
    monkeypatch.setattr("grader.run.cache.MAX_SUBMISSION_BYTES", 2 * (256 + 4 + 6 * 104))
    assert list(within_budget(entries, ["new1", "new2"])) == ["new1", "new2"]


def test_a_submission_file_of_another_format_or_key_is_ignored_whole(tmp_path):
    cache = ObservationCache(tmp_path / "c")
    key, other = "ab" + "0" * 62, "cd" + "0" * 62
    cache.put(key, {"output_tail": "hi", "cases": {}})
    assert cache.read_submission(key, 5).output_tail == "hi" and cache.stats.ignored == 0
    assert cache.read_submission(other, 5).output_tail is None and cache.stats.ignored == 0  # none stored
    cache._path(other).parent.mkdir(exist_ok=True)
    cache._path(other).write_bytes(cache._path(key).read_bytes())  # filed under a key not its own
    assert cache.read_submission(other, 5).output_tail is None and cache.stats.ignored == 5
    cache._path(other).write_text(json.dumps({"format": FORMAT - 1, "key": other, "output_tail": "", "cases": {}}))
    assert cache.read_submission(other, 2).output_tail is None and cache.stats.ignored == 7


def test_a_file_spelling_a_folder_s_key_material_is_another_submission(tmp_path):
    """Issue 25, point 4: a single file whose bytes are what the old key hashed for a folder
    (its file's name, NUL, its length, its bytes) does not get that folder's key, so it cannot
    get the folder's cached observations (it does not even import)."""
    folder = tmp_path / "folder"
    folder.mkdir()
    code = (ROOT / "tests" / "correct_variants" / "minimal" / "cudagraph.py").read_bytes()
    (folder / "cudagraph.py").write_bytes(code)
    forged = tmp_path / "forged.py"
    forged.write_bytes(len(code).to_bytes(8, "little") + code)  # the old folder material, less the shared prefix
    alone = tmp_path / "alone.py"
    alone.write_bytes(code)
    keys = {submission_hash(folder), submission_hash(forged), submission_hash(alone)}
    assert None not in keys and len(keys) == 3  # a file and a folder of the same bytes differ too


def test_the_forged_file_gets_no_cached_observation_in_a_graded_batch(tmp_path):
    """The collision above, end to end: the folder is graded first (one job) and fills the cache;
    the forged file is then graded and fails to import, with no case judged from the cache."""
    folder = tmp_path / "folder"
    folder.mkdir()
    code = (ROOT / "tests" / "correct_variants" / "minimal" / "cudagraph.py").read_bytes()
    (folder / "cudagraph.py").write_bytes(code)
    forged = tmp_path / "forged.py"
    forged.write_bytes(len(code).to_bytes(8, "little") + code)
    out, specs = tmp_path / "out", tmp_path / "specs"
    specs.mkdir()
    shutil.copy(ROOT / "specs" / "01_launch_counter.yaml", specs)
    cmd = [sys.executable, "-m", "grader.commands.cli", "grade", str(folder), str(forged), "--jobs", "1"]
    cmd += ["--out", str(out), "--cache", str(tmp_path / "cache"), "--no-similarity", "--specs", str(specs)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    honest = json.loads((out / "folder" / "report.json").read_text())
    report = json.loads((out / "forged" / "report.json").read_text())
    assert honest["score"] == honest["max_score"] > 0
    assert report["score"] == 0 and report["problem"], report.get("problem")


def test_an_empty_folder_is_part_of_what_the_worker_sees(tmp_path):
    """Issue 25, point 4: the copy makes empty folders, and code can look for them, so two
    submissions that differ only by one do not share cache entries (nor do two folders named
    differently)."""
    trees = []
    for name, extra in (("plain", None), ("with_empty", "empty"), ("other_empty", "other"), ("nested", "empty/inner")):
        root = tmp_path / name
        root.mkdir()
        (root / "cudagraph.py").write_text("X = 1\n")
        if extra:
            (root / extra).mkdir(parents=True)
        trees.append(submission_hash(root))
    assert None not in trees and len(set(trees)) == len(trees)
    again = tmp_path / "again"
    again.mkdir()
    (again / "cudagraph.py").write_text("X = 1\n")
    assert submission_hash(again) == trees[0]  # the same tree, under another folder name: one entry


def test_a_text_entry_is_read_within_its_bound(tmp_path, monkeypatch):
    """get_text reads at most MAX_ENTRY_BYTES: a larger file under a key is not one the grader
    wrote (a text entry is bounded like a frame) and is ignored, as a damaged one is."""
    import grader.run.cache as cache_module

    cache = cache_module.ObservationCache(tmp_path / "cache")
    cache.put("ab" + "0" * 62, {"text": "small"})
    assert cache.get_text("ab" + "0" * 62) == "small"
    monkeypatch.setattr(cache_module, "MAX_ENTRY_BYTES", 200)
    cache.put("ab" + "1" * 62, {"text": "x" * 300})
    assert cache.get_text("ab" + "1" * 62) is None
    assert cache.get_text("ab" + "0" * 62) == "small"


def test_a_change_to_the_graders_source_changes_the_runtime_key(tmp_path, monkeypatch):
    """The version number stays 0.1.0 while a checkout is worked on: observations recorded by
    other worker code are keyed apart by a digest of the grader's source."""
    from grader.run import cache
    from grader.run.runner import RunSettings

    package = tmp_path / "pkg"
    shutil.copytree(Path(cache.__file__).resolve().parents[1], package, ignore=shutil.ignore_patterns("__pycache__"))
    before = cache.source_digest(package)
    assert cache.source_digest(package) == before  # the same files, the same digest
    worker = package / "run" / "worker" / "guard.py"
    worker.write_text(worker.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert cache.source_digest(package) != before
    key = cache.runtime_key(RunSettings())
    monkeypatch.setattr(cache, "grader_source_digest", lambda: "another build")
    assert cache.runtime_key(RunSettings()) != key


def test_a_change_to_the_lab_pack_changes_the_runtime_key(tmp_path, monkeypatch):
    """The lab's pack is worker code too (its values, entry points, probes) and its lab.yaml says
    how the worker calls the student's code: an observation made under another lab, or another
    version of this one, is never used."""
    from dataclasses import replace

    from grader.lab import active
    from grader.run import cache
    from grader.run.runner import RunSettings

    lab = active()
    copy = tmp_path / "lab"
    shutil.copytree(lab.root, copy, ignore=shutil.ignore_patterns("__pycache__"))
    moved = replace(lab, root=copy, paths=replace(lab.paths, pack=copy / "pack"))
    before = cache.lab_digest(moved)
    assert cache.lab_digest(moved) == before and before == cache.lab_digest(lab)  # same bytes, same digest
    pack_file = sorted((copy / "pack").rglob("*.py"))[0]
    pack_file.write_text(pack_file.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    after_pack = cache.lab_digest(moved)
    (copy / "lab.yaml").write_text((copy / "lab.yaml").read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert len({before, after_pack, cache.lab_digest(moved)}) == 3
    key = cache.runtime_key(RunSettings())
    monkeypatch.setattr(cache, "lab_digest", lambda lab=None: "another lab")
    assert cache.runtime_key(RunSettings()) != key


def test_an_entry_round_trips_whatever_its_text_holds(tmp_path):
    """A stored entry reads back as it was put: UTF-8 text, and an output tail holding a lone
    surrogate (a submission's bytes read with surrogateescape), which orjson refuses to write."""
    from grader.run.cache import ObservationCache

    cache = ObservationCache(tmp_path / "cache")
    for tail in ("plain", "caf\u00e9 \u2192 \U0001f600", "bad byte \udcff"):
        key = hashlib.sha256(tail.encode("utf-8", "surrogateescape")).hexdigest()
        cache.put(key, {"output_tail": tail, "cases": {"k": {"case": "s/a", "duration_s": 0.25}}})
        stored = cache.read_submission(key, 0)
        assert stored.output_tail == tail and stored.cases == {"k": {"case": "s/a", "duration_s": 0.25}}
