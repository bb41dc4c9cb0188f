"""``graphgrade audit``: the command line of the named-mutant audit (:mod:`grader.commands.audit`)
and of ``audit --deep`` (:mod:`grader.commands.deep_audit`), apart from cli.py so that the
entry point stays small."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path

from grader.commands.cli_common import EXIT_FINDINGS, EXIT_OK, Subcommand, load_specs, specs_how
from grader.commands.spec_source import SPECS_HELP
from grader.errors import UsageError


def run(args: argparse.Namespace) -> int:
    from grader.commands.audit import AuditSetupError, run_audit
    from reports.audit_text import format_text

    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.html is not None and args.html.is_dir():
        raise UsageError(f"--html {args.html}: is a directory, give a file name")
    if not Path(args.specs).is_dir():
        raise UsageError(f"{args.specs}: not a directory of spec files")
    if getattr(args, "deep", False):
        return run_deep(args)
    if getattr(args, "only", None):
        raise UsageError("--only goes with --deep (it picks the deep audit's mutants)")
    try:
        result = run_audit(Path(args.specs), jobs=args.jobs, load=functools.partial(load_specs, how=specs_how(args)))
    except AuditSetupError as exc:
        raise UsageError(str(exc)) from None
    if args.html is not None:
        from reports import write_file
        from reports.audit_html import render_audit

        try:
            write_file(args.html, render_audit(result))
        except OSError as exc:
            raise UsageError(f"--html {args.html}: cannot write ({exc.strerror or exc})") from None
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        sys.stdout.write(format_text(result))
    if args.html is not None:
        print(f"wrote {args.html}", file=sys.stderr)
    return EXIT_OK if result.ok else EXIT_FINDINGS


def run_deep(args: argparse.Namespace) -> int:
    """``audit --deep``: the mutation score on systematic mutants of the reference (grader.commands.deep_audit)."""
    from grader.commands.audit import AuditSetupError
    from grader.commands.deep_audit import run_deep_audit
    from reports.audit_text import format_deep_text

    if args.html is not None:
        raise UsageError("--html goes with the named-mutant audit, not with --deep")
    only = None
    if args.only:
        prefixes = tuple(args.only)
        only = lambda scope: scope.startswith(prefixes)  # noqa: E731
    try:
        result = run_deep_audit(
            Path(args.specs), jobs=args.jobs, load=functools.partial(load_specs, how=specs_how(args)), only=only
        )
    except (AuditSetupError, ImportError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        sys.stdout.write(format_deep_text(result))
    return EXIT_OK if result.ok else EXIT_FINDINGS


def add_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("--specs", type=Path, default=None, help=SPECS_HELP)
    a.add_argument("--json", action="store_true", help="print the result as JSON")
    a.add_argument("--html", type=Path, default=None, metavar="FILE", help="also write an HTML page of the kill matrix")
    a.add_argument("--jobs", type=int, default=2, help="submissions graded at once (default: 2)")
    a.add_argument(
        "--deep",
        action="store_true",
        help=(
            "instead of the named mutants, grade every systematic single-change mutant of the lab's reference "
            "solution and print the mutation score; survivors must be killed by a case or listed in "
            "equivalent.yaml of the lab's mutants folder (needs the 'audit' extra; takes minutes)"
        ),
    )
    a.add_argument(
        "--only",
        action="append",
        default=None,
        metavar="SCOPE",
        help="with --deep: mutate only functions whose name starts with SCOPE, e.g. Class._method (repeatable)",
    )


COMMAND = Subcommand(
    "audit",
    help="grade the mutants and baselines against the specs: which cases catch which mistake",
    description=(
        "Grade every mutant of the reference (one realistic mistake each, reference/mutants/) and the "
        "baselines that must score low, through the same isolated path as students, against every spec. "
        "Exit 1 when a mutant survives or a baseline scores too much."
    ),
    add_arguments=add_arguments,
    run=run,
)
