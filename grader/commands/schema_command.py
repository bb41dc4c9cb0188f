"""``graphgrade schema``: the JSON Schema of spec files (:mod:`grader.suite.schema`), printed."""

from __future__ import annotations

import argparse
import json

from grader.commands.cli_common import EXIT_OK, Subcommand


def run(args: argparse.Namespace) -> int:
    from grader.suite.schema import build_schema

    print(json.dumps(build_schema(), indent=2))
    return EXIT_OK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options of its own (``--lab`` picks the lab, as for every subcommand)."""


COMMAND = Subcommand("schema", help="print the JSON Schema of spec files", add_arguments=add_arguments, run=run)
