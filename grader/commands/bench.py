"""``graphgrade bench``: eager execution against replay, per decode-like step, on the CPU
simulation and the GPU (the reference's :mod:`reference.bench`; replay checked against eager first)."""

from __future__ import annotations

import argparse
import json
import sys

from grader.commands.cli_common import EXIT_FINDINGS, EXIT_OK, Subcommand, number_arg
from grader.errors import UsageError


def run(args: argparse.Namespace) -> int:
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


def add_arguments(b: argparse.ArgumentParser) -> None:
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


COMMAND = Subcommand(
    "bench",
    help="eager against replay, per decode-like step, on the CPU simulation and the GPU (replay checked against eager first)",
    add_arguments=add_arguments,
    run=run,
)
