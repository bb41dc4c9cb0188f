"""``graphgrade prairielearn``: the entry point of a PrairieLearn external-grading job.

PrairieLearn starts one container per submission and lays out ``/grade``:
``/grade/student`` holds the student's files, ``/grade/tests`` the question's
``tests/`` folder, ``/grade/serverFilesCourse`` the course files the question
names, ``/grade/data/data.json`` the question's data. The job must create
``/grade/results/`` and write ``results.json`` there before it ends.

This command grades ``/grade/student`` through the same isolated path as
``graphgrade grade`` (zygote started before any spec is read, one sandboxed
process per case) and writes the results with :mod:`reports.prairielearn`.
It exits 0 whenever ``results.json`` was written, even when the grader itself
failed (then the submission is "not gradable", so the student keeps the
attempt, and the reason is on standard error for the staff's job log).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from grader.commands.cli_common import Subcommand
from grader.commands.spec_source import SPECS_ENV  # the specs baked into the private image (deploy/Dockerfile)
from grader.judging.results import Report

# Where a question may put its specs, in the order they are looked for (relative to --root).
SPEC_PLACES = ("tests/specs", "tests", "serverFilesCourse/graphgrade/specs", "serverFilesCourse/specs")


def find_specs(root: Path, explicit: Path | None) -> Path:
    """--specs, else the first of SPEC_PLACES under ``root`` that holds a YAML file, else
    $GRAPHGRADE_SPECS, else the suite installed with graphgrade."""
    if explicit is not None:
        return explicit
    for rel in SPEC_PLACES:
        folder = root / rel
        if folder.is_dir() and any(p.suffix in (".yaml", ".yml") for p in folder.iterdir()):
            return folder
    if os.environ.get(SPECS_ENV):
        return Path(os.environ[SPECS_ENV])
    from grader.commands.spec_source import bundled_specs_dir

    bundled = bundled_specs_dir()  # a job's folder is no checkout: the installed suite
    if not any(bundled.glob("*.y*ml")):  # the default image holds none (deploy/strip-install)
        raise ValueError(
            f"no specs: put the question's specs in {root}/tests (the question's tests/ folder) or "
            f"{root}/serverFilesCourse/graphgrade/specs, or give --specs"
        )
    return bundled


def specs_origin(root: Path, explicit: Path | None, found: Path) -> str:
    """Where :func:`find_specs` found ``found``, in words (the job log's "specs:" line)."""
    from grader.commands.spec_source import BUNDLED, GIVEN

    if explicit is not None:
        return GIVEN
    try:
        return f"the job's {found.resolve().relative_to(root.resolve()).as_posix()}/"
    except ValueError:
        return f"${SPECS_ENV}" if os.environ.get(SPECS_ENV) else BUNDLED


def lock_down(folder: Path) -> None:
    """Root only: the specs hold hidden cases, and the student's code runs in this container.
    (Landlock hides them too where the kernel has it; a normal user cannot do this and relies on
    Landlock alone, as `graphgrade grade` does.)"""
    if os.geteuid() != 0:
        return
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        os.chown(path, 0, 0)
        os.chmod(path, 0o700 if path.is_dir() else 0o600)


def write_results(results_dir: Path, text: str) -> Path:
    """Write ``results.json`` whole (through a temporary file), readable by PrairieLearn's uploader."""
    results_dir.mkdir(parents=True, exist_ok=True)
    target = results_dir / "results.json"
    fd, tmp = tempfile.mkstemp(prefix=".results.", dir=results_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def grade_job(root: Path, specs: Path | None, timeout: float, budget: float) -> Report | dict:
    """Grade ``root/student``: its report, or the results object of a grader's failure on it
    (raises for the grader's own problems)."""
    from grader.commands.cli_common import load_specs
    from grader.commands.grade import grade_submissions
    from grader.run.runner import RunSettings, Zygote
    from reports.prairielearn import grader_problem_results

    student = root / "student"
    settings = RunSettings(case_timeout_s=timeout, submission_budget_s=budget, import_timeout_s=min(10.0, budget))
    with Zygote() as zygote, tempfile.TemporaryDirectory(prefix="graphgrade-pl-") as out:  # before any spec is read
        specs_dir = find_specs(root, specs)
        if specs is None and specs_dir.resolve().is_relative_to(root.resolve()):
            lock_down(specs_dir)  # the job's own copy; an image locks its baked-in specs when it is built
        loaded = load_specs(specs_dir, specs_origin(root, specs, specs_dir))  # and say which, in the job log
        if not loaded.suite.specs:
            raise ValueError(f"{specs_dir}: no specs to grade against")
        if not student.is_dir():
            student.mkdir(parents=True)  # nothing submitted: graded as "no module file"
        graded = grade_submissions(zygote, loaded, loaded.suite.specs, [student], Path(out), settings, jobs=1)[0]
    if graded.grader_failed:
        print(f"graphgrade: internal error while grading {student}: {graded.report.problem}", file=sys.stderr)
        return grader_problem_results()
    return graded.report


def run(args: argparse.Namespace) -> int:
    from reports.outputs import PRAIRIELEARN, submission_texts
    from reports.prairielearn import dumps, grader_problem_results

    root: Path = args.root
    try:
        graded = grade_job(root, args.job_specs, args.timeout, args.budget)
        status = "graded"
    except SystemExit:  # load_specs printed the spec errors (file:line) for the job log
        graded, status = grader_problem_results(), "the specs do not load"
    except Exception as exc:  # noqa: BLE001 - the student keeps the attempt; the log says why
        print(f"graphgrade: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        graded, status = grader_problem_results(), "internal error"
    # a report's results.json as the output registry renders it (reports.outputs)
    text = (
        submission_texts(graded, command=PRAIRIELEARN)["results.json"] if isinstance(graded, Report) else dumps(graded)
    )
    try:
        path = write_results(root / "results", text)
    except OSError as exc:
        print(f"graphgrade: cannot write {root / 'results' / 'results.json'} ({exc.strerror or exc})", file=sys.stderr)
        return 3
    results = json.loads(text)
    score = f"score {results['score']:.4f}" if results.get("gradable", True) and "score" in results else "not gradable"
    print(f"graphgrade: {status}; {score}; wrote {path}", file=sys.stderr)
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", type=Path, default=Path("/grade"), help="the job's folder (default: /grade)")
    # dest is not "specs": the CLI fills a missing --specs with its default folder, and this one is looked for.
    p.add_argument(
        "--specs",
        dest="job_specs",
        type=Path,
        default=None,
        help="spec directory (default: looked for under ROOT, see above)",
    )
    from grader.commands.cli_common import number_arg

    p.add_argument("--timeout", type=number_arg(0), default=5.0, help="seconds per case (default: 5)")
    p.add_argument(
        "--budget",
        type=number_arg(0),
        default=60.0,
        help="seconds for the whole submission (default: 60; keep it under the question's timeout)",
    )


COMMAND = Subcommand(
    "prairielearn",
    help="grade a PrairieLearn external-grading job: ROOT/student in, ROOT/results/results.json out",
    description=(
        "The entry point of a PrairieLearn external grader. Grades the student's files in ROOT/student "
        "against the specs found in ROOT/tests/specs, ROOT/tests, ROOT/serverFilesCourse/graphgrade/specs, "
        "ROOT/serverFilesCourse/specs, $GRAPHGRADE_SPECS or the bundled suite (first found), and writes "
        "ROOT/results/results.json. A submission that cannot be imported is 'not gradable' (no attempt "
        "used). Exit 0 whenever results.json was written."
    ),
    add_arguments=add_arguments,
    run=run,
)
