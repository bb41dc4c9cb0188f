"""Every subcommand follows the one convention (grader.commands.cli_common.Subcommand): its module
defines ``COMMAND``, naming that module's ``add_arguments(parser)`` and ``run(args) -> int``, and
the CLI's one table (``grader.commands.cli.subcommands``) lists it. Checked on the parser that
``graphgrade`` builds and on the source of grader/commands/ (read with :mod:`ast`), whose scanner
is also run on made-up modules, so that a scanner that sees nothing cannot pass.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

import pytest

from grader.commands.cli import build_parser, subcommands
from grader.commands.cli_common import Subcommand

COMMANDS_DIR = Path(__file__).resolve().parents[1] / "grader" / "commands"


def convention_breaks(source: str, name: str) -> list[str]:
    """What in one module of grader/commands/ registers a subcommand other than by the convention:
    a parser added outside ``add_arguments`` (where only a subcommand's own choices are added),
    a ``func`` default set by hand, or a function named as the old conventions named them."""
    found = []
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and (
            node.name.startswith("cmd_") or node.name == "register" or node.name.endswith("_parser")
        ):
            found.append(f"{name}:{node.lineno}: {node.name}() (a subcommand is a COMMAND: add_arguments and run)")
    for node, inside in _calls(tree, "<module>"):
        if node.func.attr == "add_parser" and inside != "add_arguments":
            found.append(f"{name}:{node.lineno}: add_parser() in {inside}")
        if node.func.attr == "set_defaults" and any(k.arg == "func" for k in node.keywords):
            found.append(f"{name}:{node.lineno}: set_defaults(func=...) (the CLI's table sets it)")
    return sorted(set(found))


def _calls(node: ast.AST, inside: str):
    """Every method call under ``node``, with the name of the innermost function it is in."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _calls(child, child.name)
            continue
        if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
            yield child, inside
        yield from _calls(child, inside)


def test_the_table_is_the_parsers_subcommands_in_order_each_running_its_own_run():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    commands = subcommands()
    assert [c.name for c in commands] == list(sub.choices)
    assert len({c.name for c in commands}) == len(commands) >= 13
    for command in commands:
        assert isinstance(command, Subcommand)
        module = inspect.getmodule(command.run)
        assert module is inspect.getmodule(command.add_arguments), command.name
        assert module.COMMAND is command and module.run is command.run, command.name
        assert module.add_arguments is command.add_arguments, command.name
        assert list(inspect.signature(command.run).parameters) == ["args"], command.name
        assert len(inspect.signature(command.add_arguments).parameters) == 1, command.name
        assert sub.choices[command.name]._defaults["func"] is command.run


@pytest.mark.parametrize(
    "argv",
    [["schema"], ["export", "canvas", "out", "--roster", "r.csv"], ["import", "moodle", "dl.zip", "--into", "f"]],
)
def test_a_subcommand_with_choices_of_its_own_still_runs_its_run(argv):
    args = build_parser().parse_args(argv)
    (command,) = [c for c in subcommands() if c.name == argv[0]]
    assert args.func is command.run and args.command == argv[0]


def test_every_module_with_a_command_is_in_the_table_and_none_registers_another_way():
    listed = {inspect.getmodule(c.run).__file__ for c in subcommands()}
    breaks, defining = [], set()
    for path in sorted(COMMANDS_DIR.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        if any(
            isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "COMMAND" for t in n.targets)
            for n in tree.body
        ):
            defining.add(str(path))
        if path.name != "cli.py":
            breaks += convention_breaks(source, path.relative_to(COMMANDS_DIR).as_posix())
    assert defining == listed, "a module defines COMMAND but is not in cli.subcommands(), or the other way round"
    assert not breaks, "\n".join(breaks)


def test_the_scanner_sees_each_old_convention():
    old = textwrap.dedent(
        """
        def cmd_thing(args):
            return 0

        def add_thing_parser(sub):
            p = sub.add_parser("thing")
            p.set_defaults(func=cmd_thing)

        def register(sub):
            sub.add_parser("other")
        """
    )
    breaks = {
        tuple(b.split(": ", 1)[1].split(" ")[0:1]) + (int(b.split(":")[1]),) for b in convention_breaks(old, "old.py")
    }
    assert breaks == {
        ("cmd_thing()", 2),
        ("add_thing_parser()", 5),
        ("add_parser()", 6),
        ("set_defaults(func=...)", 7),
        ("register()", 9),
        ("add_parser()", 10),
    }
    good = textwrap.dedent(
        """
        def add_arguments(parser):
            choices = parser.add_subparsers(dest="kind")
            choices.add_parser("one").set_defaults(kind="one")

        def run(args):
            return 0
        """
    )
    assert convention_breaks(good, "good.py") == []
