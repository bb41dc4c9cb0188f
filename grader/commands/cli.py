"""``graphgrade``: the command line. Every user error is one line on stderr, never a traceback.

Exit codes, the same for every subcommand (and in ``--help``): 0 done (whatever
the scores), 1 a result below the bar (``grade --fail-under`` not met, ``audit``
findings, a ``bench`` replay that computes something else), 2 bad arguments or bad specs (``validate`` included), 3 a grader
problem.

Every subcommand follows one convention (:class:`grader.commands.cli_common.Subcommand`): its
module defines ``COMMAND``, naming its ``add_arguments(parser)`` and its ``run(args) -> int``;
:func:`subcommands` is the one table of them. A new subcommand is a module with a ``COMMAND``
and a line in that table.
"""

from __future__ import annotations

import argparse
import os
import sys

import grader
from grader.commands import spec_source
from grader.commands.cli_common import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    LAB_HELP,
    Subcommand,
    refuse_other_lab,
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


def _single_threaded_blas() -> None:
    """Before numpy is first imported: its BLAS with one thread. graphgrade's arrays are a few
    rows (the judge's oracles, the ops, the bench's batch); a BLAS thread pool only spins after
    each product, on the cores a grading's workers need. Whatever the environment says wins."""
    if "numpy" not in sys.modules:
        from grader.run.worker.sandbox import SINGLE_THREADED  # what every worker runs with

        for key, value in SINGLE_THREADED.items():
            os.environ.setdefault(key, value)


# ------------------------------------------------------------------ parser
class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line (and where to look), not the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"graphgrade: {message} (see {self.prog} --help)\n")


def subcommands() -> tuple[Subcommand, ...]:
    """Every subcommand, in ``--help`` order: each module's ``COMMAND`` (imported here, after
    :func:`main` has set the BLAS threads, since some of them import numpy)."""
    from grader.commands import (
        audit_command,
        bench,
        bundles,
        grade_command,
        kit,
        lms_export,
        lms_import,
        prairielearn,
        repro,
        schema_command,
        shard,
        similarity,
        validate_command,
    )

    return (
        grade_command.COMMAND,
        validate_command.COMMAND,
        schema_command.COMMAND,
        bench.COMMAND,
        bundles.COMMAND,
        kit.COMMAND,
        shard.COMMAND,
        audit_command.COMMAND,
        prairielearn.COMMAND,
        lms_export.COMMAND,
        lms_import.COMMAND,
        similarity.COMMAND,
        repro.COMMAND,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="graphgrade",
        description="Spec-driven test kit and autograder for the CUDA-graph capture and replay lab.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"graphgrade {grader.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    for command in subcommands():  # every subcommand's --help ends with the same --lab and exit codes
        p = sub.add_parser(
            command.name,
            help=command.help,
            description=command.description,
            epilog=EXIT_CODES_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_arguments(p)
        p.add_argument("--lab", default=None, metavar="PATH", help=LAB_HELP)
        p.set_defaults(func=command.run)
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
    from grader.lab.loading import LabError  # every command reads a lab: imported here, not for --help

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
    except LabError as exc:  # a part of the pack loaded when first used (its ops, step kinds, check modules)
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
