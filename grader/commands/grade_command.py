"""``graphgrade grade``: the command line of grading a batch (:mod:`grader.commands.grade`):
which submissions (none given: the lab's module file here, else the bundled reference, said
so), the sandbox's settings, the observation cache, a shard of the batch, the similarity of
the batch in the background, and the exit code (``--fail-under``, a grader problem)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

from grader.commands import similarity, spec_source
from grader.commands.cli_common import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_OK,
    Subcommand,
    load_specs,
    number_arg,
    specs_how,
)
from grader.errors import UsageError


def reference_dir() -> Path:
    """What grading "the bundled reference" grades: the folder holding the lab's reference, when
    the file has the student module's name (reference/MODULE.py), else the file itself."""
    from grader.lab import active

    lab = active()
    ref = lab.paths.reference
    return ref.parent if ref.name == lab.module_file else ref


def _default_submission() -> tuple[list[Path], Path | None]:
    """No path given: the lab's module file here (./MODULE.py, lab.yaml's student.module) when there
    is one, otherwise the bundled reference, said plainly (a student's terminal must never show
    the reference's score as theirs)."""
    from grader.lab import active

    lab = active()
    here = Path(lab.module_file)
    if here.is_file():
        print(f"graphgrade: no submission given: grading ./{lab.module_file}", file=sys.stderr)
        return [here], None
    if lab.handout_path and Path(lab.handout_path).is_file():  # the handout's layout: this folder is the submission
        print(f"graphgrade: no submission given: grading this folder (./{lab.handout_path})", file=sys.stderr)
        return [Path.cwd()], None
    import importlib.util

    from grader.commands.kit import kit_info

    if kit_info() is not None or importlib.util.find_spec("reference") is None:  # no reference to fall back on
        raise UsageError(
            f"no submission given and no {lab.module_file} here: give the folder of your work, e.g. graphgrade grade my-lab/"
        )
    ref = reference_dir()
    print(
        f"graphgrade: no submission given and no {lab.module_file} here: grading the bundled reference solution "
        "(a check of the install, not your work; give a path to grade yours, e.g. graphgrade grade my-lab/)",
        file=sys.stderr,
    )
    return [ref], ref


@contextlib.contextmanager
def _cancelled_on_error(background: similarity.BackgroundComparison | None):
    """Stop the background comparison when the grading does not finish (Ctrl-C, a sandbox failure)."""
    try:
        yield
    except BaseException:
        if background is not None:
            background.cancel()
        raise


def run(args: argparse.Namespace) -> int:
    from grader.commands.grade import grade_submissions, unique_names
    from grader.commands.kit import grading_note, student_outputs_only, withheld_points
    from grader.commands.progress import Progress
    from grader.run.runner import RunSettings, Zygote, lost_layers, running_as_root

    if args.submissions:
        submissions, reference = [Path(p) for p in args.submissions], None
    else:
        submissions, reference = _default_submission()
    for path in submissions:
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot make the output directory ({exc.strerror})") from None
    settings = RunSettings(
        case_timeout_s=args.timeout,
        submission_budget_s=args.budget,
        import_timeout_s=min(args.import_timeout, args.budget),
        isolation=args.isolation,
    )
    cache = _open_cache(args)
    names = None
    if args.shard is not None:
        from grader.commands.shard import parse_shard, select, write_manifest

        k, n = parse_shard(args.shard)
        names = unique_names(submissions)  # from the whole list, so that every shard names alike
        chosen = select(names, k, n)
        write_manifest(args.out, k, n, names, [names[i] for i in chosen])
        print(f"shard {k}/{n}: {len(chosen)} of {len(names)} submissions", file=sys.stderr)
        submissions, names = [submissions[i] for i in chosen], [names[i] for i in chosen]
        if not submissions:
            return EXIT_OK
    if getattr(args, "similarity", None) is None:  # comparing students is the staff's: the student kit leaves it out
        args.similarity = not student_outputs_only()
    started = time.monotonic()
    # the similarity of a batch: compared in the background while it is graded (not for a shard:
    # `graphgrade merge` compares the whole class)
    background = None
    if args.shard is None:
        background = similarity.start_for_batch(
            args, unique_names(submissions), submissions, cache.dir if cache is not None else None
        )
    # the zygote is started before any spec is read: workers never hold hidden cases
    with _cancelled_on_error(background), Zygote() as zygote:
        loaded = load_specs(args.specs, specs_how(args))  # while the zygote starts (it answers once it has)
        for lost in lost_layers(zygote.layers()):
            print(f"graphgrade: sandbox: {lost} (see SECURITY.md)", file=sys.stderr)
        if len(submissions) > 1 and not running_as_root():
            print(
                f"graphgrade: sandbox: grading {len(submissions)} submissions as a normal user: workers share your uid, so "
                "without Landlock one submission may read the others, the specs and the cache; grade a class as root in a "
                "container or VM (see SECURITY.md)",
                file=sys.stderr,
            )
        suite = loaded.suite if args.visibility == "all" else loaded.suite.only_visible()
        specs = suite.specs
        if not specs:
            raise UsageError(f"{args.specs}: no {args.visibility} specs to grade against")
        graded = grade_submissions(
            zygote,
            loaded,
            specs,
            submissions,
            args.out,
            settings,
            jobs=args.jobs,
            on_done=Progress(len(submissions)),
            hidden_visibility=args.gradescope_hidden_visibility,
            reference=reference,
            withheld_points=withheld_points(args.specs),
            cache=cache,
            names=names,
            student_only=student_outputs_only(),
        )
    if cache is not None:
        s = cache.stats
        print(
            f"cache: {s.hits} of {s.hits + s.misses} cases judged from {cache.dir} ({s.misses} run{f', {s.ignored} unreadable entries ignored' if s.ignored else ''})",
            file=sys.stderr,
        )
    similarity.after_grading(args, graded, background)  # staff only: OUT/similarity.*, never part of a score
    elapsed = time.monotonic() - started
    percents = [g.report.percent for g in graded]
    mean = sum(percents) / len(percents)
    scope = "public specs" if args.visibility == "visible" or withheld_points(args.specs) else "all specs"
    print(
        f"graded {len(graded)} submission{'s' if len(graded) != 1 else ''} against {sum(len(s.cases) for s in specs)} cases ({scope}) "
        f"in {elapsed:.1f} s; mean score {mean:.1f}%; reports in {args.out}/",
        file=sys.stderr,
    )
    if note := grading_note(args.specs):
        print(note, file=sys.stderr)
    failed = [g.name for g in graded if g.grader_failed]
    if failed:
        print(
            f"graphgrade: internal error while grading {', '.join(failed)} (see their reports; please report this)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    if args.fail_under is not None and min(percents) < args.fail_under:
        print(f"graphgrade: a score of {min(percents):.1f}% is below --fail-under {args.fail_under:g}", file=sys.stderr)
        return EXIT_FINDINGS
    return EXIT_OK


def add_arguments(g: argparse.ArgumentParser) -> None:
    g.add_argument(
        "submissions",
        nargs="*",
        metavar="SUBMISSION",
        help="a directory holding the lab's MODULE.py (lab.yaml's student.module), or that file",
    )
    g.add_argument("--specs", type=Path, default=None, help=spec_source.SPECS_HELP)
    g.add_argument(
        "--out", type=Path, default=Path("graphgrade-out"), help="output directory (default: graphgrade-out)"
    )
    g.add_argument(
        "--jobs",
        type=number_arg(1, integer=True, inclusive=True),
        default=2,
        help="submissions graded at once (default: 2)",
    )
    g.add_argument(
        "--visibility",
        choices=("visible", "all"),
        default="all",
        help="'visible' runs only the public specs, as students do; the report then says how many points the hidden specs hold (default: all)",
    )
    g.add_argument(
        "--timeout", type=number_arg(0), default=5.0, metavar="SECONDS", help="time limit per case (default: 5)"
    )
    g.add_argument(
        "--budget",
        type=number_arg(0),
        default=60.0,
        metavar="SECONDS",
        help="time limit per submission, all its cases together (default: 60)",
    )
    g.add_argument(
        "--import-timeout",
        type=number_arg(0),
        default=10.0,
        metavar="SECONDS",
        help="time limit for importing the submission's module (its module-level code) in each worker, at most --budget (default: 10)",
    )
    g.add_argument(
        "--fail-under",
        type=number_arg(0, inclusive=True, maximum=100),
        default=None,
        metavar="PCT",
        help="exit 1 when any score is below PCT percent (0 to 100)",
    )
    from reports.gradescope import GRADESCOPE_VISIBILITIES

    g.add_argument(
        "--gradescope-hidden-visibility",
        choices=GRADESCOPE_VISIBILITIES,
        default="hidden",
        metavar="VIS",
        help="the Gradescope test visibility of hidden cases in results.json: 'hidden' (default; staff only, full detail), "
        "or after_due_date / after_published / visible, where students see them, as passed / not passed only",
    )
    g.add_argument(
        "--isolation",
        choices=("module", "process"),
        default="module",
        help="how cases of one submission are kept apart: 'module' (default, fast) runs each in the submission's sandboxed worker "
        "against a freshly executed copy of its code, replacing the worker after a crash; 'process' forks a process per case",
    )
    g.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="observation cache: cases whose submission files, steps and runtime are unchanged are judged again without running "
        "(default: $XDG_CACHE_HOME/graphgrade or ~/.cache/graphgrade; made mode 0700: it holds hidden cases' observations, staff only)",
    )
    g.add_argument("--no-cache", action="store_true", help="run every case; read and write no observation cache")
    g.add_argument(
        "--shard",
        default=None,
        metavar="K/N",
        help="grade only shard K of N (1 <= K <= N): a stable share of the submissions, chosen by name; "
        "give every shard the same list, then join the --out folders with `graphgrade merge`",
    )
    similarity.add_grade_options(g)
    g.set_defaults(similarity=None)  # on, but in the student kit (see run): staff files


def _open_cache(args: argparse.Namespace):
    """The observation cache of ``grade`` (see grader.run.cache), or None with --no-cache."""
    if args.no_cache:
        if args.cache is not None:
            raise UsageError("--cache and --no-cache: give one of them")
        return None
    from grader.run.cache import ObservationCache, default_cache_dir

    return ObservationCache(args.cache if args.cache is not None else default_cache_dir())


COMMAND = Subcommand(
    "grade",
    help="grade submissions and write reports (no path: the lab's ./MODULE.py, else the bundled reference)",
    description=(
        "Grade each SUBMISSION in isolated, time-limited workers and write OUT/<name>/report.html (the student's "
        "page: hidden cases as passed / not passed only), staff.html and report.json (everything, hidden cases "
        "included), results.json (Gradescope), junit.xml, and OUT/summary.html and OUT/grades.csv for the batch. "
        "In the student kit: the student's files only (no staff.html or similarity files; for one submission no "
        "summary.html or grades.csv). "
        "With no SUBMISSION: the lab's module file here (./MODULE.py, lab.yaml's student.module) when there is one, otherwise the bundled reference solution (said so)."
    ),
    add_arguments=add_arguments,
    run=run,
)
