"""``graphgrade validate``: the command line of checking a suite (:mod:`grader.commands.validate`):
every spec file loads and the reference passes every case, on the backend asked for."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.commands import spec_source
from grader.commands.cli_common import EXIT_OK, EXIT_USAGE, Subcommand, specs_how
from grader.errors import UsageError


def run(args: argparse.Namespace) -> int:
    from grader.commands.validate import cases_no_mutant_kills, validate_suite
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
        for warning in cases_no_mutant_kills(specs_dir):  # a warning only: the exit status stays
            print(f"graphgrade: warning: {warning}", file=sys.stderr)
    return EXIT_USAGE if problems else EXIT_OK  # a spec that does not load, or that the reference fails, is a bad spec


def add_arguments(v: argparse.ArgumentParser) -> None:
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


COMMAND = Subcommand(
    "validate",
    help="check spec files and run every case against the reference",
    description="Load every spec file and run every case against the reference: a spec the reference fails is a broken spec (reported at the failing check's line).",
    add_arguments=add_arguments,
    run=run,
)
