"""``graphgrade``: the command line. Every user error is one line on stderr, never a traceback.

Exit codes, the same for every subcommand (and in ``--help``): 0 done (whatever
the scores), 1 a result below the bar (``grade --fail-under`` not met, ``audit``
findings, a ``bench`` replay that computes something else), 2 bad arguments or bad specs (``validate`` included), 3 a grader
problem. Each subcommand is a ``cmd_<name>`` function and an ``add_<name>_parser``
function registering it, so that new subcommands are added beside them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

import grader
from grader.commands import similarity, spec_source
from grader.commands.cli_common import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    LAB_HELP,
    load_specs,
    number_arg,
    refuse_other_lab,
    specs_how,
    use_lab,
)

EXIT_CODES_HELP = """exit status (every subcommand):
  0  done, whatever the scores
  1  a result below the bar: grade --fail-under not met; audit found a surviving
     mutant or a baseline scoring too much; bench found a replay whose output
     differs from eager execution; export left a graded submission out of the
     grade file; import refused an entry of a download (the rest was written)
  2  bad arguments or bad specs (a spec that does not load, or that the
     reference fails, in validate)
  3  a grader problem (in grade: the grader failed on a submission; its report
     says so and every other submission was graded; please report it with the
     command you ran)"""


from grader.errors import UsageError  # noqa: E402 - re-exported for the subcommands


def reference_dir() -> Path:
    """What grading "the bundled reference" grades: the folder holding the lab's reference, when
    the file has the student module's name (reference/MODULE.py), else the file itself."""
    from grader.lab import active

    lab = active()
    ref = lab.paths.reference
    return ref.parent if ref.name == lab.module_file else ref


def refuse_without_reference(command: str | None) -> None:
    """An install stripped for a grading image (deploy/strip-install) has no reference solution:
    the commands that run it say so in one line."""
    import importlib.util

    from grader.commands.kit import FULL_PACKAGE_COMMANDS

    if command in FULL_PACKAGE_COMMANDS and importlib.util.find_spec("reference") is None:
        raise UsageError(
            f"'graphgrade {command}' needs the reference solution, which this install leaves out "
            "(a grading image: deploy/strip-install); run it where graphgrade is installed in full"
        )


# ------------------------------------------------------------------ grade
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


def _single_threaded_blas() -> None:
    """Before numpy is first imported: its BLAS with one thread. graphgrade's arrays are a few
    rows (the judge's oracles, the ops, the bench's batch); a BLAS thread pool only spins after
    each product, on the cores a grading's workers need. Whatever the environment says wins."""
    if "numpy" not in sys.modules:
        from grader.run.worker.sandbox import SINGLE_THREADED  # what every worker runs with

        for key, value in SINGLE_THREADED.items():
            os.environ.setdefault(key, value)


def cmd_grade(args: argparse.Namespace) -> int:
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


def add_grade_parser(sub) -> None:
    g = sub.add_parser(
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
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    g.set_defaults(similarity=None)  # on, but in the student kit (see cmd_grade): staff files
    g.set_defaults(func=cmd_grade)


def _open_cache(args: argparse.Namespace):
    """The observation cache of ``grade`` (see grader.run.cache), or None with --no-cache."""
    if args.no_cache:
        if args.cache is not None:
            raise UsageError("--cache and --no-cache: give one of them")
        return None
    from grader.run.cache import ObservationCache, default_cache_dir

    return ObservationCache(args.cache if args.cache is not None else default_cache_dir())


# ------------------------------------------------------------------ validate
def cmd_validate(args: argparse.Namespace) -> int:
    from grader.commands.validate import validate_suite
    from grader.lab import active
    from grader.lab.reference import ReferenceUnavailable, load_reference

    if args.dir is not None:
        if specs_how(args) == spec_source.GIVEN:
            raise UsageError("give the spec directory once: --specs DIR (or the older positional DIR), not both")
        args.specs, args.specs_source = args.dir, spec_source.SpecSource(args.dir, spec_source.GIVEN)
    specs_dir = args.specs
    if not specs_dir.is_dir():
        raise UsageError(f"{specs_dir}: no such directory")
    try:
        load_reference(active(), args.backend)  # say why a backend cannot run, in one line, before anything else
    except ReferenceUnavailable as exc:
        raise UsageError(f"cannot validate on the {args.backend} backend: {exc}") from None
    notes: list[str] = []
    problems, summary = validate_suite(
        specs_dir,
        backend=args.backend,
        notes=notes,
        on_loaded=lambda loaded: spec_source.say_specs(specs_dir, specs_how(args), loaded),
    )
    for note in notes:  # cupy: keys run eagerly on purpose, and why
        print(note)
    for problem in problems:
        print(f"graphgrade: {problem}", file=sys.stderr)
    print(summary, file=sys.stderr if problems else sys.stdout)
    if not problems:
        from grader.commands.validate import cases_no_mutant_kills

        for warning in cases_no_mutant_kills(specs_dir):  # a warning only: the exit status stays
            print(f"graphgrade: warning: {warning}", file=sys.stderr)
    return EXIT_USAGE if problems else EXIT_OK  # a spec that does not load, or that the reference fails, is a bad spec


def add_validate_parser(sub) -> None:
    v = sub.add_parser(
        "validate",
        help="check spec files and run every case against the reference",
        description="Load every spec file and run every case against the reference: a spec the reference fails is a broken spec (reported at the failing check's line).",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument("--specs", type=Path, default=None, help=spec_source.SPECS_HELP)
    v.add_argument(
        "dir",
        nargs="?",
        type=Path,
        default=None,
        metavar="DIR",
        help="the same as --specs DIR (kept for older scripts)",
    )
    v.add_argument(
        "--backend",
        choices=("numpy", "cupy", "python"),
        default=None,
        help="reference backend to validate against (default: numpy for a lab with backends, else python)",
    )
    v.set_defaults(func=cmd_validate)


def cmd_schema(args: argparse.Namespace) -> int:
    from grader.suite.schema import build_schema

    print(json.dumps(build_schema(), indent=2))
    return EXIT_OK


def add_schema_parser(sub) -> None:
    s = sub.add_parser(
        "schema",
        help="print the JSON Schema of spec files",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.set_defaults(func=cmd_schema)


def cmd_bench(args: argparse.Namespace) -> int:
    from reference.bench import format_table, run_benchmark, to_json

    backends = ("cpu", "cuda") if args.backend == "all" else (args.backend,)
    try:
        result = run_benchmark(
            chain_lengths=tuple(args.chains), repeats=args.repeats, backends=backends, steps=args.steps
        )
    except ValueError as exc:  # a non-positive chain length, repeat or step count
        raise UsageError(str(exc)) from None
    print(json.dumps(to_json(result), indent=2) if args.json else format_table(result))
    if not result.all_checks_passed:  # a replay that computes something else is no speed-up
        print(
            "graphgrade: bench: a replay's output differs from eager execution (see the check column)", file=sys.stderr
        )
        return EXIT_FINDINGS
    return EXIT_OK


def add_bench_parser(sub) -> None:
    b = sub.add_parser(
        "bench",
        help="eager against replay, per decode-like step, on the CPU simulation and the GPU (replay checked against eager first)",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    b.add_argument("--json", action="store_true", help="print JSON instead of a table")
    b.add_argument(
        "--backend",
        choices=("cpu", "cuda", "all"),
        default="all",
        help="which path to time: the CPU simulation, the CUDA path (needs CuPy and a GPU), or both (default: all)",
    )
    b.add_argument(
        "--chains",
        type=number_arg(1, integer=True, inclusive=True),
        nargs="+",
        default=[8, 16, 32, 64, 128, 256, 512],
        metavar="N",
        help="op-chain lengths to time (default: 8 16 32 64 128 256 512)",
    )
    b.add_argument(
        "--repeats",
        type=number_arg(1, integer=True, inclusive=True),
        default=5,
        metavar="N",
        help="timed samples per measurement; the median is reported (default: 5)",
    )
    b.add_argument(
        "--steps",
        type=number_arg(1, integer=True, inclusive=True),
        default=20,
        metavar="N",
        help="decode-like steps per timed sample (default: 20)",
    )
    b.set_defaults(func=cmd_bench)


# ------------------------------------------------------------------ parser
class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line (and where to look), not the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"graphgrade: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="graphgrade",
        description="Spec-driven test kit and autograder for the CUDA-graph capture and replay lab.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"graphgrade {grader.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    add_grade_parser(sub)
    add_validate_parser(sub)
    add_schema_parser(sub)
    add_bench_parser(sub)
    from grader.commands.bundles import add_gradescope_bundle_parser

    add_gradescope_bundle_parser(sub)

    from grader.commands.kit import add_student_kit_parser

    add_student_kit_parser(sub)

    from grader.commands.shard import add_merge_parser

    add_merge_parser(sub)

    from grader.commands.audit_command import add_audit_parser

    add_audit_parser(sub)
    from grader.commands import prairielearn

    prairielearn.register(sub)
    from grader.commands import lms_export

    lms_export.register(sub)
    from grader.commands import lms_import

    lms_import.register(sub)
    similarity.register(sub)
    from grader.commands import repro

    repro.register(sub)
    for command in sub.choices.values():  # every subcommand's --help ends with the same exit codes
        command.add_argument("--lab", default=None, metavar="PATH", help=LAB_HELP)
        if not command.epilog:
            command.epilog = EXIT_CODES_HELP
            command.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def main(argv: list[str] | None = None) -> int:
    from grader.trusted_path import harden

    harden()  # no child of ours imports from the current folder (a class folder's student named `pickle`)
    _single_threaded_blas()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        print("graphgrade: a COMMAND is needed (see the list above)", file=sys.stderr)
        return EXIT_USAGE
    try:
        from grader.commands.kit import refuse_in_kit

        refuse_in_kit(args.command)  # a student kit has no reference: say so in one line
        refuse_without_reference(args.command)
        lab_given = use_lab(args.lab)
        refuse_other_lab(args.command, deep=bool(getattr(args, "deep", False)))
        if hasattr(
            args, "specs"
        ):  # --specs, else the --lab's specs, else this checkout's specs/, else the installed suite
            args.specs_source = spec_source.choose(
                args.specs, graded=getattr(args, "submissions", None) or (), lab_given=lab_given
            )
            args.specs = args.specs_source.path
        return args.func(args)
    except UsageError as exc:
        print(f"graphgrade: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("graphgrade: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, and where to report it
        print(
            f"graphgrade: internal error: {type(exc).__name__}: {exc} (please report this with the command you ran)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
