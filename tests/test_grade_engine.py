"""End-to-end tests of the grading engine: ``graphgrade grade`` and the runner behind it.

Submissions are written into ``tmp_path`` by the fixtures below. Most checks read the
``report.json`` files of one ``graphgrade grade`` run over a small class (one module-scoped
run keeps the file fast); a few finer checks call the Python API.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.shipped import shipped_suite

import grader
from grader.commands.grade import grade_submissions
from grader.judging.report_reading import read_report
from grader.judging.report_writing import report_to_json
from grader.judging.results import REPORT_FORMAT, STATUSES
from grader.run.runner import RunSettings, Zygote

ROOT = Path(grader.__file__).resolve().parents[1]
SPECS = ROOT / "specs"
REFERENCE = ROOT / "reference" / "cudagraph.py"
TEMPLATE = ROOT / "student_template"

# ---------------------------------------------------------------- submissions
# A correct solution written apart from the reference (tests/support/solutions/split_helpers):
# graphs keyed on (shape, dtype), the static *output* buffer returned (aliased, as real engines
# do), padding done by a helper imported from the submission's own directory.
SOLUTION = Path(__file__).parent / "support" / "solutions" / "split_helpers"
HELPERS = (SOLUTION / "_helpers.py").read_text()
ALT = (SOLUTION / "cudagraph.py").read_text()
ANSWERS = (SOLUTION / "answers.md").read_text()  # its notebook answers (lines before every fault's anchor but one)
STRETCH_MARK = "\n# ---------------------------------------------------------------- stretch goals\n"
assert ALT.count(STRETCH_MARK) == 1, "the solution marks where its stretch goals start"
ALT_CORE = ALT.split(STRETCH_MARK)[0]  # the same solution without the stretch goals
STRETCH_NAMES = ("fuse_elementwise", "StepMode", "InferenceGraphCapture")


def inject(source: str, anchor: str, code: str) -> str:
    """The source with ``code`` inserted right after the line ``anchor`` (which must exist once)."""
    assert source.count(anchor) == 1, anchor
    return source.replace(anchor, anchor + code)


FUSE = "def fuse_elementwise(ops):\n"
# Each fault fires inside some cases only; the clean ALT is the same code without it.
FAULTS = {
    "crash_segv": (FUSE, "    import ctypes\n    ctypes.string_at(0)\n"),
    "sys_exit": (FUSE, "    import sys\n    sys.exit(0)\n"),
    "os_exit_batch3": (
        "        x = np.asarray(x)\n",
        "        if x.ndim and x.shape[0] == 3:\n            import os\n            os._exit(0)\n",
    ),
    "hang": ("    def disable(self):\n", "        while True:\n            pass\n"),
}
HANG_TIMEOUT_S = 0.7


def write_dir(root: Path, name: str, files: dict[str, str]) -> Path:
    path = root / name
    path.mkdir()
    for filename, text in files.items():
        (path / filename).write_text(text)
    return path


@pytest.fixture(scope="module")
def suite():
    return shipped_suite()


@pytest.fixture(scope="module")
def all_cases(suite):
    return {c.uid: c for s in suite.suite.specs for c in s.cases}


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    """A small class: every kind of submission the engine must cope with."""
    root = tmp_path_factory.mktemp("class")
    subs = {
        "alt": write_dir(root, "alt", {"cudagraph.py": ALT, "_helpers.py": HELPERS, "answers.md": ANSWERS}),
        "core_only": write_dir(
            root, "core_only", {"cudagraph.py": ALT_CORE, "_helpers.py": HELPERS, "answers.md": ANSWERS}
        ),
        "syntax": write_dir(
            root, "syntax", {"cudagraph.py": "import numpy as np\n\ndef run_eager(ops, x:\n    return x\n"}
        ),
        "import_error": write_dir(
            root, "import_error", {"cudagraph.py": "import numpy as np\nfrom _nowhere import something\n"}
        ),
        "no_module": write_dir(root, "no_module", {"solution.py": ALT}),
    }
    template = root / "template"
    shutil.copytree(TEMPLATE, template, ignore=shutil.ignore_patterns("__pycache__"))
    subs["template"] = template
    (root / "foo.py").write_text(REFERENCE.read_text())
    subs["foo"] = root / "foo.py"
    for name, (anchor, code) in FAULTS.items():
        files = {"cudagraph.py": inject(ALT, anchor, code), "_helpers.py": HELPERS, "answers.md": ANSWERS}
        subs[name] = write_dir(root, name, files)
    return subs


def graphgrade(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "grade", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )


def load_reports(out: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/report.json")}


def by_uid(report: dict) -> dict[str, dict]:
    return {f"{c['spec']}/{c['case']}": c for c in report["cases"]}


@pytest.fixture(scope="module")
def class_run(klass, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    proc = graphgrade(*klass.values(), "--out", out, "--timeout", HANG_TIMEOUT_S, "--fail-under", 50)
    return proc, load_reports(out), out


# ---------------------------------------------------------------- the command
def test_class_run_completes_and_fail_under_trips(class_run, klass):
    proc, reports, out = class_run
    assert proc.returncode == 1, proc.stderr  # graded, but some scores are under --fail-under 50
    assert "below --fail-under 50" in proc.stderr
    assert sorted(reports) == sorted(klass)
    for name in klass:  # one line per submission, and a summary
        assert any(line.startswith(f"{name}: ") for line in proc.stdout.splitlines()), (name, proc.stdout)
    assert f"graded {len(klass)} submissions against" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    for name in klass:
        read_report(out / name / "report.json")  # valid by the report schema


def test_report_json_is_versioned_with_documented_keys(class_run, suite):
    _, reports, _ = class_run
    report = reports["alt"]
    assert report["format"] == REPORT_FORMAT
    assert {"score", "max_score", "submission", "cases"} <= set(report)
    assert report["submission"] == "alt"
    assert len(report["cases"]) == sum(len(s.cases) for s in suite.suite.specs)
    for case in report["cases"]:
        assert {"spec", "case", "tag", "status", "score", "max_score", "message"} <= set(case)
        assert case["status"] in STATUSES
        assert 0 <= case["score"] <= case["max_score"]
    assert report["max_score"] == pytest.approx(sum(s.points for s in suite.suite.specs))
    assert report["score"] == pytest.approx(sum(c["score"] for c in report["cases"]))


def test_correct_submission_written_differently_gets_full_marks(class_run):
    _, reports, _ = class_run
    report = reports["alt"]
    failed = [(c["case"], c["message"]) for c in report["cases"] if c["status"] != "passed"]
    assert failed == []
    assert report["score"] == report["max_score"] == 106  # its answers.md included


def test_untouched_template_gets_a_clean_zero_with_a_message_per_case(class_run):
    _, reports, _ = class_run
    report = reports["template"]
    assert report["score"] == 0 and report["problem"] == ""
    for case in report["cases"]:
        assert case["status"] == "failed", case
        assert "NotImplementedError" in case["message"], case


def test_missing_stretch_names_fail_only_the_cases_that_need_them(class_run, all_cases):
    _, reports, _ = class_run
    cases = by_uid(reports["core_only"])
    needing = {uid for uid, case in all_cases.items() if set(case.needs) & set(STRETCH_NAMES)}
    assert needing and len(needing) < len(all_cases)
    for uid, case in cases.items():
        if uid in needing:
            assert case["status"] == "failed", case
            assert any(name in case["message"] for name in STRETCH_NAMES), case
            assert "does not define" in case["message"], case
        else:
            assert case["status"] == "passed", case


@pytest.mark.parametrize(
    "name, where",
    [("syntax", "cudagraph.py:3: SyntaxError"), ("import_error", "cudagraph.py:2: ModuleNotFoundError")],
)
def test_an_unimportable_submission_fails_every_case_with_file_and_line(class_run, name, where):
    _, reports, _ = class_run
    report = reports[name]
    assert report["score"] == 0
    assert report["problem"].startswith(where), report["problem"]
    for case in report["cases"]:  # hidden cases too: the problem is the submission's, not the case's
        assert case["status"] == "error" and case["message"].startswith(where), case
    assert ", line " not in report["problem"]  # the place is said once, as file:line


def test_a_directory_without_cudagraph_py_says_so(class_run):
    _, reports, _ = class_run
    report = reports["no_module"]
    assert "no cudagraph.py" in report["problem"]
    assert all(c["status"] == "error" and "no cudagraph.py" in c["message"] for c in report["cases"])


def test_a_file_submission_is_graded_under_its_stem(class_run):
    _, reports, _ = class_run
    assert reports["foo"]["submission"] == "foo"
    assert reports["foo"]["score"] == 100


# ---------------------------------------------------------------- faults in single cases
def _compare_with_clean(reports, name):
    """(cases that differ from the clean run, cases that do not)."""
    clean, faulty = by_uid(reports["alt"]), by_uid(reports[name])
    assert clean.keys() == faulty.keys()
    differ = {
        uid
        for uid in clean
        if (clean[uid]["status"], clean[uid]["score"]) != (faulty[uid]["status"], faulty[uid]["score"])
    }
    for uid in set(clean) - differ:
        assert faulty[uid]["status"] == "passed" and faulty[uid]["score"] == clean[uid]["score"]
    return differ, faulty


@pytest.mark.parametrize(
    "name, status, words",
    [
        ("crash_segv", "crashed", "SIGSEGV"),
        ("sys_exit", "failed", "SystemExit"),
        ("os_exit_batch3", "crashed", "before reporting a result"),
        ("hang", "timeout", f"did not finish within {HANG_TIMEOUT_S:g} s"),
    ],
)
def test_a_fault_in_some_cases_costs_those_cases_only(class_run, all_cases, name, status, words):
    _, reports, _ = class_run
    differ, faulty = _compare_with_clean(reports, name)
    assert differ, "the fault never fired"
    assert len(differ) <= len(all_cases) // 4
    if FAULTS[name][0] == FUSE:  # exactly the cases that call fuse_elementwise
        assert differ == {uid for uid, c in all_cases.items() if "fuse_elementwise" in c.needs}
    for uid in differ:
        case = faulty[uid]
        assert case["status"] == status and case["score"] == 0, case
        if all_cases[uid].spec in VISIBLE_SPECS:
            assert words in case["message"], case
    clean = reports["alt"]["score"]
    assert reports[name]["score"] == pytest.approx(clean - sum(by_uid(reports["alt"])[u]["max_score"] for u in differ))


VISIBLE_SPECS = {s.id for s in shipped_suite().suite.specs if s.visibility == "visible"}


# ---------------------------------------------------------------- other invocations
@pytest.mark.slow
def test_no_submission_grades_the_reference_to_full_marks(tmp_path):
    proc = graphgrade("--out", tmp_path, "--fail-under", 100)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "reference" / "report.json").read_text())
    assert report["score"] == report["max_score"] == 106
    assert (
        "reference (bundled solution): all specs 106/106" in proc.stdout
        and "grading the bundled reference" in proc.stderr
    )


@pytest.mark.slow
def test_visibility_visible_runs_and_lists_only_visible_specs(tmp_path, klass, suite):
    proc = graphgrade(klass["alt"], klass["template"], "--visibility", "visible", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    reports = load_reports(tmp_path)
    visible = {s.id: s for s in suite.suite.specs if s.visibility == "visible"}
    hidden_cases = {c.id for s in suite.suite.specs if s.visibility != "visible" for c in s.cases}
    assert visible and hidden_cases
    for report in reports.values():
        assert {c["spec"] for c in report["cases"]} == set(visible)
        assert {s["id"] for s in report["specs"]} == set(visible)
        assert all(c["visibility"] == "visible" and not c["redacted"] for c in report["cases"])
        text = json.dumps(report)
        hidden_specs = {s.id for s in suite.suite.specs if s.visibility != "visible"}
        assert not any(f'"{spec_id}"' in text for spec_id in hidden_specs)
        assert not any(f'"{case_id}"' in text for case_id in hidden_cases - {c["case"] for c in report["cases"]})
        assert report["max_score"] == pytest.approx(sum(s.points for s in visible.values()))
    assert reports["alt"]["score"] == reports["alt"]["max_score"]
    assert all("NotImplementedError" in c["message"] for c in reports["template"]["cases"])


@pytest.mark.parametrize(
    "args, words",
    [
        (["--jobs", "0"], "--jobs"),
        (["--timeout", "0"], "--timeout"),
        (["--timeout", "nan"], "--timeout"),
        (["--fail-under", "120"], "--fail-under"),
        (["/no/such/submission"], "no such file"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(tmp_path, args, words):
    proc = graphgrade(*args, "--out", tmp_path / "out")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphgrade: ") and words in lines[0], proc.stderr
    assert proc.stdout == ""


def test_an_unusable_out_directory_is_a_usage_error(tmp_path):
    (tmp_path / "file").write_text("")
    proc = graphgrade("--out", tmp_path / "file")
    assert proc.returncode == 2 and "--out" in proc.stderr and "internal error" not in proc.stderr


# ---------------------------------------------------------------- the Python API
@pytest.mark.slow
def test_grading_twice_gives_the_same_reports(klass, tmp_path, suite):
    import gc

    names = ["alt", "template", "core_only", "crash_segv", "os_exit_batch3", "syntax"]
    settings = RunSettings(case_timeout_s=5.0)
    interval, frozen = sys.getswitchinterval(), gc.get_freeze_count()
    with Zygote() as zygote:
        loaded = shipped_suite()
        first = grade_submissions(
            zygote, loaded, loaded.suite.specs, [klass[n] for n in names], tmp_path / "a", settings, jobs=2
        )
        second = grade_submissions(
            zygote, loaded, loaded.suite.specs, [klass[n] for n in names], tmp_path / "b", settings, jobs=1
        )
    # what grading tunes for itself (the switch interval, the collector's frozen heap) is put back
    assert sys.getswitchinterval() == interval and gc.get_freeze_count() <= frozen
    assert [g.name for g in first] == [g.name for g in second] == names
    for a, b in zip(first, second):
        assert report_to_json(a.report, timing=False) == report_to_json(b.report, timing=False), a.name
        on_disk = json.loads((tmp_path / "a" / a.name / "report.json").read_text())
        on_disk.pop("duration_s")
        for case in on_disk["cases"]:
            case.pop("duration_s")
        assert on_disk == json.loads(json.dumps(report_to_json(a.report, timing=False)))


@pytest.mark.slow
def test_output_is_captured_per_case_and_cut_to_a_tail(tmp_path):
    noisy = inject(ALT, "def run_eager(ops, x):\n", "    print('x' * 10000)\n    print('run_eager called')\n")
    sub = write_dir(tmp_path, "noisy", {"cudagraph.py": noisy, "_helpers.py": HELPERS})
    loaded = None
    with Zygote() as zygote:
        loaded = shipped_suite()
        specs = tuple(s for s in loaded.suite.specs if s.tag == "eager" and s.visibility == "visible")
        [graded] = grade_submissions(
            zygote, loaded, specs, [sub], tmp_path / "out", RunSettings(tail_bytes=1000), jobs=1
        )
    assert graded.report.score == graded.report.max_score
    tails = [c.output_tail for c in graded.report.cases]
    assert all(t.endswith("run_eager called\n") and len(t) < 1100 and "earlier bytes cut" in t for t in tails), tails[
        0
    ][:200]


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["module", "process"])
def test_output_tails_stay_with_their_cases_when_cases_are_pipelined(tmp_path, suite, isolation):
    """Every case prints a mark of its own (its process id and a token its fresh module draws
    once). Queuing the next case early (look-ahead) must never move one case's output into
    another case's tail: each tail holds its own case's output only, in both isolation modes."""
    from grader.commands.grade import look_ahead_for
    from grader.run.runner import ScratchArea, case_messages, run_submission

    mark = "    import os, uuid\n    global _TOKEN\n    _TOKEN = globals().get('_TOKEN') or uuid.uuid4().hex\n    print(f'pid={os.getpid()}-{_TOKEN}')\n"
    chatty = inject(ALT, "def run_eager(ops, x):\n", mark)
    sub = write_dir(tmp_path, "chatty", {"cudagraph.py": chatty, "_helpers.py": HELPERS})
    specs = suite.suite.specs
    cases = tuple(c for s in specs for c in s.cases)
    shown = [s.visibility == "visible" for s in specs for _ in s.cases]
    ahead = look_ahead_for(specs)
    assert any(ahead) and not all(ahead) and not ahead[-1]
    assert all(ahead[i] == (shown[i] == shown[i + 1]) for i in range(len(cases) - 1))
    with Zygote() as zygote:
        area = ScratchArea()
        try:
            run = run_submission(
                zygote, area, 0, sub, cases, RunSettings(isolation=isolation), case_messages(cases), ahead
            )
        finally:
            area.close()
    assert all(c.status == "observed" for c in run.cases)
    pids = [set(line for line in c.output_tail.splitlines() if line.startswith("pid=")) for c in run.cases]
    assert sum(1 for p in pids if p) > 20
    mixed = [i for i, p in enumerate(pids) if len(p) > 1]
    assert not mixed, mixed  # no case's tail holds a line of the next case, queued or not
    seen: set[str] = set()
    for p in pids:  # no process printed into two tails
        assert len(p) <= 1 and seen.isdisjoint(p)
        seen |= p


# ---------------------------------------------------------------- hidden inputs stay hidden
def test_run_order_puts_every_visible_case_first(suite):
    from grader.commands.grade import run_order

    visibilities = [s.visibility for s in run_order(suite.suite.specs)]
    first_other = next(i for i, v in enumerate(visibilities) if v != "visible")
    assert all(v == "visible" for v in visibilities[:first_other]) and "visible" not in visibilities[first_other:]


@pytest.mark.slow
def test_a_hidden_case_input_never_reaches_a_visible_case_output(tmp_path, suite):
    """A submission that logs every input it sees to its scratch directory and prints the whole
    log on each call: a hidden case's input must not show up in any visible case's output."""
    from grader.arrays import build_array
    from grader.spec_model import ArrayValue

    spy = tmp_path / "spy"
    spy.mkdir()
    leak = (
        "\nimport os as _os\n"
        "_Original = GraphRunner\n"
        "class GraphRunner(_Original):\n"
        "    def __call__(self, x):\n"
        "        with open('seen.log', 'a') as log:\n"
        "            log.write('SEEN %.9g\\n' % float(x.flat[0]))\n"
        "        print(open('seen.log').read())\n"
        "        return super().__call__(x)\n"
    )
    (spy / "cudagraph.py").write_text(REFERENCE.read_text() + leak)
    out = tmp_path / "out"
    result = graphgrade(spy, "--out", out, "--jobs", "1")
    assert result.returncode == 0, result.stderr

    def first_values(visible: bool) -> set[str]:
        values = set()
        for spec in suite.suite.specs:
            if (spec.visibility == "visible") != visible:
                continue
            for case in spec.cases:
                for step in case.steps:
                    for value in step.args:
                        if isinstance(value, ArrayValue):
                            values.add(f"SEEN {float(build_array(value).flat[0]):.9g}")
        return values

    hidden_only = first_values(False) - first_values(True)
    assert hidden_only, "the suite should have hidden inputs distinct from the visible ones"
    report = json.loads((out / "spy" / "report.json").read_text())
    visible_tails = "\n".join(c["output_tail"] for c in report["cases"] if c["visibility"] == "visible")
    assert "SEEN" in visible_tails  # the spy really prints what it saw
    printed = {line.strip() for line in visible_tails.splitlines()}
    leaked = sorted(hidden_only & printed)
    assert not leaked, f"hidden inputs printed in a visible case's output: {leaked[:3]}"


# ---------------------------------------------------------------- review fixes
def test_output_names_never_collide():
    from grader.commands.grade import unique_names

    names = unique_names([Path("a/alice"), Path("b/alice"), Path("c/alice-2"), Path("d/summary.html")])
    assert len(set(names)) == 4 and names[:2] == ["alice", "alice-2"]
    assert "summary.html" not in names


def test_redacted_cases_carry_no_timing_where_students_read(class_run):
    _, reports, out = class_run
    redacted = [c for r in reports.values() for c in r["cases"] if c["redacted"]]
    assert redacted  # report.json, the staff's record, keeps their timing; students' files do not
    for name in reports:
        gs = json.loads((out / name / "results.json").read_text())
        seen = sum(c["duration_s"] for c in reports[name]["cases"] if not c["redacted"])
        assert gs["execution_time"] == math.ceil(seen) and (seen == 0 or gs["execution_time"] >= 1)  # real, not 0
        assert all(
            t["visibility"] == "hidden"
            for t in gs["tests"]
            if "Hidden case" in t["name"] or "hidden from students" in t["name"]
        )
        assert "graded in" not in (out / name / "report.html").read_text()


@pytest.mark.slow
def test_a_symlinked_file_submission_is_graded(tmp_path):
    (tmp_path / "real").mkdir()
    shutil.copy(REFERENCE, tmp_path / "real" / "alice.py")
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "alice.py").symlink_to("../real/alice.py")
    result = graphgrade(tmp_path / "linked" / "alice.py", "--out", tmp_path / "out", "--visibility", "visible")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "out" / "alice" / "report.json").read_text())
    assert report["score"] == report["max_score"] - 6  # all but the notebook answers: a file holds none


def test_bench_rejects_bad_counts_in_one_line():
    result = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "bench", "--repeats", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "internal error" not in result.stderr


def test_a_grader_failure_costs_one_report_not_the_class(tmp_path, suite, monkeypatch):
    import grader.commands.grade as grade_module

    real = grade_module.run_submission

    def flaky(zygote, area, slot, submission, *rest):
        if submission.name == "broken_for_the_grader":
            raise RuntimeError("simulated grader bug")
        return real(zygote, area, slot, submission, *rest)

    monkeypatch.setattr(grade_module, "run_submission", flaky)
    subs = []
    for name in ("first", "broken_for_the_grader", "last"):
        (tmp_path / name).mkdir()
        shutil.copy(REFERENCE, tmp_path / name / "cudagraph.py")
        shutil.copy(REFERENCE.parent / "answers.md", tmp_path / name / "answers.md")
        subs.append(tmp_path / name)
    visible = suite.suite.only_visible().specs
    with Zygote() as zygote:
        graded = grade_submissions(zygote, suite, visible, subs, tmp_path / "out", RunSettings(), jobs=2)
    by_name = {g.name: g for g in graded}
    assert [g.name for g in graded] == ["first", "broken_for_the_grader", "last"]
    assert by_name["first"].report.percent == 100 and by_name["last"].report.percent == 100
    assert (
        by_name["broken_for_the_grader"].grader_failed
        and "simulated grader bug" in by_name["broken_for_the_grader"].report.problem
    )
    assert (tmp_path / "out" / "grades.csv").read_text().count("\n") == 4  # header + 3 rows


@pytest.mark.slow
def test_a_hidden_input_cannot_come_back_through_a_reimport_error(tmp_path, suite):
    """A hidden case writes what it was given to disk and kills its worker; the replacement
    worker's import fails with that text. None of it may reach the report."""
    hidden_uids = {c.uid for s in suite.suite.specs if s.visibility != "visible" for c in s.cases}
    spy = tmp_path / "spy"
    spy.mkdir()
    spy_code = (
        "\nimport os as _os\n"
        "if _os.path.exists('loot.txt'):\n"
        "    raise ImportError('LOOT ' + open('loot.txt').read())\n"
        "_Original = GraphRunner\n"
        "class GraphRunner(_Original):\n"
        "    def __call__(self, x):\n"
        "        if x.ndim == 2 and x.shape[0] == 7:\n"  # batch 7 appears only in hidden padding cases
        "            open('loot.txt', 'w').write('SECRET %r' % (x.ravel()[:3].tolist(),))\n"
        "            _os.kill(_os.getppid(), 9)\n"
        "        return super().__call__(x)\n"
    )
    (spy / "cudagraph.py").write_text(REFERENCE.read_text() + spy_code)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "grader.commands.cli", "grade", str(spy), "--out", str(out), "--jobs", "1"]
    if os.geteuid() == 0 and shutil.which("setpriv"):
        # As in a default Docker container: no CAP_SYS_ADMIN, so no private tmpfs, and files a
        # case writes stay in the scratch directory for the next worker to find.
        command = ["setpriv", "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin", *command]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    report = json.loads((out / "spy" / "report.json").read_text())
    assert any(c["status"] == "crashed" and c["redacted"] for c in report["cases"])  # the spy did fire
    # What the student reads (staff.html and report.json are the staff's full record).
    gs = json.loads((out / "spy" / "results.json").read_text())
    gs["tests"] = [t for t in gs["tests"] if t["visibility"] != "hidden"]
    everything = "".join(
        (out / "spy" / f).read_text(errors="replace") for f in ("report.html", "junit.xml")
    ) + json.dumps(gs)
    assert "SECRET" not in everything and "LOOT" not in everything
    assert hidden_uids  # the suite has hidden cases for the spy to reach


def test_a_sandbox_that_cannot_be_set_up_stops_grading_instead_of_blaming_the_student(tmp_path, suite, monkeypatch):
    from grader.run.runner import SandboxFailure, ScratchArea, run_submission

    real_prepare = ScratchArea.prepare

    def broken_prepare(self, slot, submission, *rest):
        scratch, code, log = real_prepare(self, slot, submission, *rest)
        return log, code, log  # a file where the scratch directory should be: sandbox.enter fails

    monkeypatch.setattr(ScratchArea, "prepare", broken_prepare)
    area = ScratchArea()
    try:
        with Zygote() as zygote, pytest.raises(SandboxFailure, match="could not be set up"):
            run_submission(zygote, area, 0, REFERENCE, suite.suite.cases[:3], RunSettings())
    finally:
        area.close()
