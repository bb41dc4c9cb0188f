"""The command line's own logic (grader.commands.cli), in this process: arguments to settings, exit codes,
what it says on stderr, and the choice of what to grade.

The grading engine and the audit are replaced by recorders here (they have their own tests:
test_grade_engine, test_scoring, test_audit); what is left is what the command decides. Every
user error is one line on stderr and exit 2, whatever the subcommand.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_reports_samples import passing_report

import grader.commands.audit
import grader.commands.grade
import grader.run.runner
from grader.commands.audit import AuditResult, BaselineResult, MutantResult, SpecInfo
from grader.commands.cli import EXIT_CODES_HELP, build_parser, main
from grader.commands.grade import GradedSubmission
from grader.commands.grade_command import reference_dir
from grader.suite.loader import load_suite

SPECS = Path(__file__).resolve().parents[1] / "specs"


@pytest.fixture(scope="module")
def specs(tmp_path_factory) -> Path:
    """A small spec directory (the launch-counter file: a visible and a hidden spec), quick to load."""
    directory = tmp_path_factory.mktemp("specs")
    shutil.copy(SPECS / "01_launch_counter.yaml", directory)
    return directory


def run(argv: list[str]) -> int:
    """main(argv)'s exit status, whether it returns it or argparse exits with it."""
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:
        return exc.code


# ------------------------------------------------------------------ the parser
def test_every_subcommand_ends_its_help_with_the_exit_codes():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    assert {"grade", "validate", "schema", "bench", "audit", "gradescope-bundle", "student-kit", "merge"} <= set(
        sub.choices
    )
    for name, command in sub.choices.items():
        assert "exit status (every subcommand):" in command.format_help(), name
    assert EXIT_CODES_HELP in parser.format_help()


def test_no_command_is_a_usage_error(capsys):
    assert run([]) == 2
    assert capsys.readouterr().err.rstrip().splitlines()[-1] == "graphgrade: a COMMAND is needed (see the list above)"


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["grade", "--jobs", "0"], "--jobs"),
        (["grade", "--jobs", "two"], "--jobs"),
        (["grade", "--timeout", "nan"], "--timeout"),
        (["grade", "--timeout", "0"], "--timeout"),
        (["grade", "--fail-under", "120"], "--fail-under"),
        (["grade", "--visibility", "some"], "--visibility"),
        (["bench", "--repeats", "0"], "--repeats"),
        (["audit", "--jobs", "0"], "--jobs"),
        (["grade", "--cache", "c", "--no-cache"], "--no-cache"),
    ],
)
def test_a_bad_option_is_one_line_naming_it(argv, flag, capsys, tmp_path):
    assert run([*argv, *(["--out", tmp_path / "out", reference_dir()] if argv[0] == "grade" else [])]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphgrade: ") and flag in lines[0], captured.err
    assert captured.out == ""


def test_schema_prints_the_spec_files_json_schema(capsys):
    from grader.suite.schema import build_schema

    assert run(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == build_schema()


def test_a_spec_directory_that_does_not_load_is_exit_2_naming_the_file(tmp_path, capsys):
    (tmp_path / "broken.yaml").write_text("format: 1\nspecs:\n  - id: x\n    title: 3\n")
    assert run(["grade", "--specs", tmp_path, "--out", tmp_path / "out", "--no-cache", reference_dir()]) == 2
    err = capsys.readouterr().err
    assert "broken.yaml" in err and "Traceback" not in err


# ------------------------------------------------------------------ grade, with the engine recorded
class _NoZygote:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def layers(self) -> dict:
        return {"root": False}


@pytest.fixture
def engine(monkeypatch):
    """grade_submissions replaced by a recorder; each submission scores ``engine.percents[name]``."""
    calls = []
    percents: dict[str, float] = {}
    failing: set[str] = set()

    def grade_submissions(zygote, loaded, specs, submissions, out, settings, jobs=1, **options):
        calls.append(
            {
                "specs": specs,
                "submissions": list(submissions),
                "out": out,
                "settings": settings,
                "jobs": jobs,
                **options,
            }
        )
        graded = []
        for path in submissions:
            name = grader.commands.grade.submission_name(Path(path))
            report = passing_report(name)
            report = replace(report, score=report.max_score * percents.get(name, 100.0) / 100)
            graded.append(
                GradedSubmission(
                    Path(path),
                    name,
                    report,
                    out / name,
                    grader_failed=name in failing,
                    is_reference=path == options.get("reference"),
                )
            )
        return graded

    monkeypatch.setattr(grader.run.runner, "Zygote", _NoZygote)
    monkeypatch.setattr(grader.commands.grade, "grade_submissions", grade_submissions)
    return SimpleNamespace(calls=calls, percents=percents, failing=failing)


def _submissions(tmp_path, *names) -> list[Path]:
    paths = []
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "cudagraph.py").write_text("")
        paths.append(tmp_path / name)
    return paths


def test_grade_turns_options_into_settings(engine, specs, tmp_path, capsys):
    subs = _submissions(tmp_path, "alice", "bob")
    suite = load_suite(specs).suite
    argv = [
        "grade",
        *subs,
        "--specs",
        specs,
        "--out",
        tmp_path / "out",
        "--jobs",
        "3",
        "--timeout",
        "2.5",
        "--budget",
        "30",
        "--import-timeout",
        "45",
        "--isolation",
        "process",
        "--no-cache",
    ]
    assert run(argv) == 0
    (call,) = engine.calls
    settings = call["settings"]
    assert (settings.case_timeout_s, settings.submission_budget_s, settings.isolation) == (2.5, 30.0, "process")
    assert settings.import_timeout_s == 30.0  # never more than the whole submission's budget
    assert call["jobs"] == 3 and call["submissions"] == subs and call["out"] == tmp_path / "out"
    assert call["specs"] == suite.specs and call["cache"] is None and call["reference"] is None
    err = capsys.readouterr().err
    assert f"graded 2 submissions against {len(suite.cases)} cases (all specs)" in err and "mean score 100.0%" in err


def test_visibility_visible_grades_only_the_public_specs(engine, specs, tmp_path, capsys):
    assert (
        run(
            [
                "grade",
                *_submissions(tmp_path, "alice"),
                "--specs",
                specs,
                "--out",
                tmp_path / "out",
                "--visibility",
                "visible",
                "--no-cache",
            ]
        )
        == 0
    )
    (call,) = engine.calls
    suite = load_suite(specs).suite
    assert call["specs"] == suite.only_visible().specs and len(call["specs"]) < len(suite.specs)
    assert "(public specs)" in capsys.readouterr().err


def test_fail_under_exits_1_only_below_the_bar(engine, specs, tmp_path, capsys):
    subs = _submissions(tmp_path, "alice", "bob")
    engine.percents["bob"] = 50.0
    common = [*subs, "--specs", specs, "--out", tmp_path / "out", "--no-cache"]
    assert run(["grade", *common, "--fail-under", "40"]) == 0
    capsys.readouterr()
    assert run(["grade", *common, "--fail-under", "60"]) == 1
    err = capsys.readouterr().err
    assert "graphgrade: a score of 50.0% is below --fail-under 60" in err and "mean score 75.0%" in err


def test_a_grader_failure_is_exit_3_naming_the_submission(engine, specs, tmp_path, capsys):
    engine.failing.add("bob")
    assert (
        run(
            [
                "grade",
                *_submissions(tmp_path, "alice", "bob"),
                "--specs",
                specs,
                "--out",
                tmp_path / "out",
                "--no-cache",
                "--fail-under",
                "0",
            ]
        )
        == 3
    )
    assert "internal error while grading bob" in capsys.readouterr().err


def test_no_submission_grades_cudagraph_py_here_or_else_the_reference_and_says_which(
    engine, specs, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert run(["grade", "--specs", specs, "--out", "out", "--no-cache"]) == 0
    assert engine.calls[-1]["submissions"] == [reference_dir()] and engine.calls[-1]["reference"] == reference_dir()
    assert "grading the bundled reference solution (a check of the install, not your work" in capsys.readouterr().err
    (tmp_path / "cudagraph.py").write_text("")
    assert run(["grade", "--specs", specs, "--out", "out", "--no-cache"]) == 0
    assert engine.calls[-1]["submissions"] == [Path("cudagraph.py")] and engine.calls[-1]["reference"] is None
    assert "no submission given: grading ./cudagraph.py" in capsys.readouterr().err


def test_a_missing_submission_is_one_line_before_anything_runs(engine, tmp_path, capsys):
    assert run(["grade", tmp_path / "nobody", "--out", tmp_path / "out"]) == 2
    assert capsys.readouterr().err.strip() == f"graphgrade: {tmp_path / 'nobody'}: no such file or directory"
    assert engine.calls == []


# ------------------------------------------------------------------ audit, with the grading recorded
def _audit_result(survivor: bool) -> AuditResult:
    specs = (SpecInfo("s", "A spec", "eager", "visible", ("s/one", "s/two")),)
    mutants = (
        MutantResult("caught", "a caught mistake", ("s/one",)),
        *((MutantResult("lucky", "a mistake no case catches", ()),) if survivor else ()),
    )
    baselines = (BaselineResult("template", "the template", 0.0, 1.0, 0.0, 0.0, ()),)
    return AuditResult(specs, mutants, baselines, (), 1.0, "specs/")


@pytest.mark.parametrize("survivor", [False, True], ids=["clean", "survivor"])
def test_audit_exit_status_text_json_and_html(monkeypatch, tmp_path, capsys, survivor):
    asked = []

    def run_audit(specs_dir, jobs=2, load=None):
        asked.append((Path(specs_dir), jobs))
        return _audit_result(survivor)

    monkeypatch.setattr(grader.commands.audit, "run_audit", run_audit)
    status = 1 if survivor else 0
    assert run(["audit", "--jobs", "3"]) == status
    text = capsys.readouterr().out
    assert asked[-1] == (SPECS.resolve(), 3)
    last = text.rstrip().splitlines()[-1]
    assert last.startswith("FAILED" if survivor else "OK")
    assert ("SURVIVED lucky: a mistake no case catches" in text) == survivor
    html = tmp_path / "audit.html"
    assert run(["audit", "--json", "--html", html, "--specs", tmp_path]) == status
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["ok"] is not survivor and data["survivors"] == (["lucky"] if survivor else [])
    assert asked[-1][0] == tmp_path and f"wrote {html}" in captured.err
    assert 'id="m-caught"' in html.read_text(encoding="utf-8")
