"""``graphgrade``: the command line. Every user error is one line on stderr, never a traceback.

Exit codes: 0 done (whatever the scores), 1 ``--fail-under`` not met / validation
or audit found problems, 2 bad arguments or bad specs, 3 an internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import grader
from grader import similarity

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


from grader.errors import UsageError  # noqa: E402 - re-exported for the subcommands


def default_specs_dir() -> Path:
    import specs

    return Path(specs.__file__).resolve().parent


def reference_dir() -> Path:
    import reference

    return Path(reference.__file__).resolve().parent


def _load(specs_dir: Path):
    from grader.loader import SpecErrors, load_suite

    try:
        return load_suite(specs_dir)
    except SpecErrors as errors:
        for error in errors.errors:
            print(f"graphgrade: {error}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None


# ------------------------------------------------------------------ grade
def cmd_grade(args: argparse.Namespace) -> int:
    import math

    from grader.grade import Progress, grade_submissions
    from grader.runner import RunSettings, Zygote

    submissions = [Path(p) for p in args.submissions] or [reference_dir()]
    for path in submissions:
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
    if not (0 < args.timeout < math.inf and 0 < args.budget < math.inf) or args.jobs < 1:  # NaN fails too
        raise UsageError("--timeout and --budget must be positive numbers and --jobs at least 1")
    if args.fail_under is not None and not 0 <= args.fail_under <= 100:
        raise UsageError(f"--fail-under is a percentage from 0 to 100, not {args.fail_under:g}")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot make the output directory ({exc.strerror})") from None
    settings = RunSettings(case_timeout_s=args.timeout, submission_budget_s=args.budget, import_timeout_s=min(10.0, args.budget))
    started = time.monotonic()
    with Zygote() as zygote:  # started before any spec is read: workers never hold hidden cases
        loaded = _load(args.specs)
        suite = loaded.suite if args.visibility == "all" else loaded.suite.only_visible()
        specs = suite.specs
        if not specs:
            raise UsageError(f"{args.specs}: no {args.visibility} specs to grade against")
        graded = grade_submissions(zygote, loaded, specs, submissions, args.out, settings, jobs=args.jobs, on_done=Progress(len(submissions)))
    similarity.after_grading(args, graded)  # staff only: OUT/similarity.*, never part of a score
    elapsed = time.monotonic() - started
    percents = [g.report.percent for g in graded]
    mean = sum(percents) / len(percents)
    print(
        f"graded {len(graded)} submission{'s' if len(graded) != 1 else ''} against {sum(len(s.cases) for s in specs)} cases "
        f"in {elapsed:.1f} s; mean score {mean:.1f}%; reports in {args.out}/",
        file=sys.stderr,
    )
    failed = [g.name for g in graded if g.grader_failed]
    if failed:
        print(f"graphgrade: internal error while grading {', '.join(failed)} (see their reports; please report this)", file=sys.stderr)
        return EXIT_INTERNAL
    if args.fail_under is not None and min(percents) < args.fail_under:
        print(f"graphgrade: a score of {min(percents):.1f}% is below --fail-under {args.fail_under:g}", file=sys.stderr)
        return EXIT_FINDINGS
    return EXIT_OK


# ------------------------------------------------------------------ validate
def cmd_validate(args: argparse.Namespace) -> int:
    from grader.validate import validate_suite
    from reference.backend import BackendUnavailable, load_backend

    try:
        load_backend(args.backend)  # say why a backend cannot run, in one line, before anything else
    except BackendUnavailable as exc:
        raise UsageError(f"cannot validate on the {args.backend} backend: {exc}") from None
    problems, summary = validate_suite(args.dir, backend=args.backend)
    for problem in problems:
        print(f"graphgrade: {problem}", file=sys.stderr)
    print(summary, file=sys.stderr if problems else sys.stdout)
    return EXIT_FINDINGS if problems else EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from grader.schema import build_schema

    print(json.dumps(build_schema(), indent=2))
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    from reference.bench import format_table, run_benchmark, to_json

    backends = ("cpu", "cuda") if args.backend == "all" else (args.backend,)
    try:
        result = run_benchmark(chain_lengths=tuple(args.chains), repeats=args.repeats, backends=backends)
    except ValueError as exc:  # a non-positive chain length or repeat count
        raise UsageError(str(exc)) from None
    print(json.dumps(to_json(result), indent=2) if args.json else format_table(result))
    return EXIT_OK


def cmd_gradescope_bundle(args: argparse.Namespace) -> int:
    from reports.gradescope import build_bundle

    _load(args.specs)  # refuse to bundle specs that do not load
    root = Path(grader.__file__).resolve().parents[1]
    build_bundle(args.output, args.specs, root)
    print(f"wrote {args.output}: upload it as the autograder of a Gradescope programming assignment")
    return EXIT_OK


# ------------------------------------------------------------------ parser
class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line (and where to look), not the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="graphgrade",
        description="Spec-driven test kit and autograder for the CUDA-graph capture and replay lab.",
    )
    parser.add_argument("--version", action="version", version=f"graphgrade {grader.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    g = sub.add_parser("grade", help="grade submissions (the reference when none is given) and write reports")
    g.add_argument("submissions", nargs="*", metavar="SUBMISSION", help="a directory holding cudagraph.py, or that file")
    g.add_argument("--specs", type=Path, default=None, help="spec directory (default: the bundled suite)")
    g.add_argument("--out", type=Path, default=Path("graphgrade-out"), help="output directory (default: graphgrade-out)")
    g.add_argument("--jobs", type=int, default=2, help="submissions graded at once (default: 2)")
    g.add_argument("--visibility", choices=("visible", "all"), default="all", help="'visible' runs only the public specs, as students do (default: all)")
    g.add_argument("--timeout", type=float, default=5.0, help="seconds per case (default: 5)")
    g.add_argument("--budget", type=float, default=60.0, help="seconds per submission (default: 60)")
    g.add_argument("--fail-under", type=float, default=None, metavar="PCT", help="exit 1 when any score is below PCT percent")
    similarity.add_grade_options(g)
    g.set_defaults(func=cmd_grade)

    v = sub.add_parser("validate", help="check spec files and run every case against the reference")
    v.add_argument("dir", nargs="?", type=Path, default=None, help="spec directory (default: the bundled suite)")
    v.add_argument("--backend", choices=("numpy", "cupy"), default="numpy", help="reference backend to validate against (default: numpy)")
    v.set_defaults(func=cmd_validate)

    s = sub.add_parser("schema", help="print the JSON Schema of spec files")
    s.set_defaults(func=cmd_schema)

    b = sub.add_parser("bench", help="eager against replay, per decode-like step, on the CPU simulation and the GPU")
    b.add_argument("--json", action="store_true", help="print JSON")
    b.add_argument("--backend", choices=("cpu", "cuda", "all"), default="all")
    b.add_argument("--chains", type=int, nargs="+", default=[10, 50, 200], metavar="N", help="op-chain lengths (default: 10 50 200)")
    b.add_argument("--repeats", type=int, default=5)
    b.set_defaults(func=cmd_bench)

    z = sub.add_parser("gradescope-bundle", help="build a ready Gradescope autograder zip")
    z.add_argument("--specs", type=Path, default=None, help="spec directory (default: the bundled suite)")
    z.add_argument("--output", type=Path, default=Path("graphgrade-autograder.zip"))
    z.set_defaults(func=cmd_gradescope_bundle)

    from grader.audit import add_audit_parser

    add_audit_parser(sub)
    from grader import prairielearn

    prairielearn.register(sub)
    from grader import lms_export

    lms_export.register(sub)
    similarity.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    for attr in ("specs", "dir"):
        if hasattr(args, attr) and getattr(args, attr) is None:
            setattr(args, attr, default_specs_dir())
    try:
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
        print(f"graphgrade: internal error: {type(exc).__name__}: {exc} (please report this with the command you ran)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
