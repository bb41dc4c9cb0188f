"""What the subcommands share: their one convention (:class:`Subcommand`), exit codes, spec
loading with one-line errors, number arguments.

In a module of its own, not in cli.py, for two reasons: subcommands registered from other
modules (``student-kit`` in :mod:`grader.commands.kit`, ``prairielearn`` in :mod:`grader.commands.prairielearn`)
use these without importing cli.py, which imports them (no import cycle); and under
``python -m grader.commands.cli`` (where cli.py is ``__main__``) there is still one copy of each.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


@dataclass(frozen=True)
class Subcommand:
    """One ``graphgrade NAME``, the one convention of every subcommand: its module defines
    ``COMMAND = Subcommand(...)`` with a function ``add_arguments(parser)`` that adds its options
    (and its own sub-choices, as ``export`` and ``import`` have) and a function ``run(args)``
    that does it and returns the exit code. The CLI's table (:data:`grader.commands.cli.COMMANDS`)
    lists the modules in ``--help`` order, makes each parser with ``help`` and ``description``,
    and gives every one the same ``--lab`` option and exit codes."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    description: str | None = None


LAB_HELP = "the lab to grade: its folder (holding lab.yaml); default: $GRAPHGRADE_LAB, else the installed default lab"


# Commands that still know only the default lab (its ops, template layout or file names): with
# another lab they stop in one line rather than build or read the default lab's files.
DEFAULT_LAB_ONLY = ("gradescope-bundle", "student-kit", "bench", "repro")


def refuse_other_lab(command: str | None, deep: bool = False) -> None:
    """One line (exit 2) when ``command`` cannot yet serve the active lab, another than the default."""
    from grader.errors import UsageError
    from grader.lab import active
    from grader.lab.loading import default_lab_root

    if (command in DEFAULT_LAB_ONLY or (command == "audit" and deep)) and active().root != default_lab_root():
        what = "audit --deep" if command == "audit" else command
        raise UsageError(
            f"{what} knows only the default lab for now, not {active().id!r} (docs/labs.md: what is left to move)"
        )


def use_lab(given: str | None) -> bool:
    """Activate the lab a command names (``--lab``, else ``$GRAPHGRADE_LAB``, else the default);
    a bad lab is one line (exit 2). Returns whether a lab was named (its specs are then the default)."""
    import os

    from grader.errors import UsageError
    from grader.lab import LabError, use
    from grader.lab.loading import LAB_ENV

    try:
        use(given)
    except LabError as exc:
        raise UsageError(str(exc)) from None
    return bool(given) or bool(os.environ.get(LAB_ENV))


def default_specs_dir() -> Path:
    """The folder a command reads without --specs: this checkout's specs/, else the installed
    suite (see :mod:`grader.commands.spec_source`)."""
    from grader.commands.spec_source import default_specs

    return default_specs().path


def load_specs(specs_dir: Path, how: str | None = None):
    """The suite in ``specs_dir``; when it does not load, every error on stderr (one line
    each, ``file:line``) and exit 2. With ``how`` (where the folder came from), the folder and
    its counts on one line of stderr (:func:`grader.commands.spec_source.specs_line`)."""
    from grader.suite.loader import SpecErrors, load_suite

    try:
        loaded = load_suite(specs_dir)
    except SpecErrors as errors:
        for error in errors.errors:
            print(f"graphgrade: {error}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None
    if how is not None:
        from grader.commands.spec_source import say_specs

        say_specs(specs_dir, how, loaded)
    return loaded


def specs_how(args: argparse.Namespace) -> str:
    """Where ``args.specs`` came from (set by the CLI's main; a caller that built ``args``
    itself gave the folder)."""
    from grader.commands.spec_source import GIVEN

    source = getattr(args, "specs_source", None)
    return source.how if source is not None else GIVEN


def number_arg(minimum: float, *, integer: bool = False, inclusive: bool = False, maximum: float | None = None):
    """An argparse type: a finite number above ``minimum`` (or at least it), so that a bad
    value is reported against its own flag ("argument --jobs: must be at least 1, not 0")."""

    def parse(text: str):
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'a whole number' if integer else 'a number'}, not {text!r}"
            ) from None
        if (
            not math.isfinite(value)
            or (value < minimum if inclusive else value <= minimum)
            or (maximum is not None and value > maximum)
        ):
            if maximum is not None:
                raise argparse.ArgumentTypeError(f"must be from {minimum:g} to {maximum:g}, not {text}")
            bound = f"at least {minimum:g}" if inclusive else f"more than {minimum:g}"
            raise argparse.ArgumentTypeError(f"must be {bound}, not {text}")
        return value

    parse.__name__ = "number"
    return parse
