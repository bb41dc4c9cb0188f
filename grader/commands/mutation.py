"""Systematic mutants of the reference's source, for ``graphgrade audit --deep``.

The named mutants in ``reference/mutants/`` are the mistakes the suite's author
thought of. This module makes the ones nobody thought of: it walks the source
of the lab's reference solution and makes one small change at a time, each one a
complete submission of its own.

The operators come from mutmut (``mutmut.mutation.mutators.mutation_operators``,
mutmut 3.x): comparison and arithmetic operator swaps, ``+1`` on number
literals, ``True``/``False`` and ``and``/``or`` flips, ``not`` removal, ``is``/
``in`` negation, ``x = ...`` to ``x = None``, argument removal, forced ternary
branches. They are pure functions from a libcst node to its mutated forms, so
they are used here as a library; mutmut's runner, configuration, trampolines
and database are not involved. mutmut has no operator for the rest of the
families the audit needs, so :data:`EXTRA_OPERATORS` adds them in the same
style: ``-1`` on number literals, a removed statement (replaced by ``pass``),
``return x`` to ``return None``, two adjacent positional arguments swapped, and
the condition of an ``if`` negated.

Not mutated: docstrings, annotations, imports, decorators, and lines marked
``# pragma: no mutate`` (mutmut's own marker).

Each mutant is named by something that survives edits elsewhere in the file:
the file, the enclosing function (``Class._method``), the text of the line
the change starts on, and the change itself. ``reference/mutants/equivalent.yaml``
uses that key.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

PRAGMA = "pragma: no mutate"
MAX_CHANGE = 140


@dataclass(frozen=True)
class Mutant:
    """One change to one source file; ``source`` is the whole mutated file."""

    file: str  # as given, normally relative to the repository root
    line: int  # 1-based line the change starts on (for people; not part of the key)
    scope: str  # enclosing class and function, "Class._method"; "<module>" at top level
    line_text: str  # that line, stripped
    change: str  # "a >= b -> a > b", "remove: run.clear()"
    operator: str  # the operator's name
    source: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.file, self.scope, self.line_text, self.change)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def _require_libcst():
    try:
        import libcst
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise ImportError("graphgrade audit --deep needs the 'audit' extra: pip install 'graphgrade[audit]'") from None
    return libcst


def _mutmut_operators() -> list[tuple[type, Callable]]:
    try:
        from mutmut.mutation.mutators import mutation_operators
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise ImportError(
            "graphgrade audit --deep needs the 'audit' extra (mutmut 3.x): pip install 'graphgrade[audit]'"
        ) from None
    return list(mutation_operators)


# ------------------------------------------------------------------ operators mutmut lacks
def _number_minus_one(node) -> Iterable:
    cst = _require_libcst()
    if isinstance(node, (cst.Integer, cst.Float)):
        value = node.evaluated_value - 1
        yield (
            node.with_changes(value=repr(value))
            if value >= 0
            else cst.UnaryOperation(cst.Minus(), node.with_changes(value=repr(-value)))
        )


def _remove_statement(node) -> Iterable:
    cst = _require_libcst()
    if isinstance(node, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in node.body):
        return
    if isinstance(node, (cst.SimpleStatementLine, cst.If, cst.For, cst.While, cst.With, cst.Try)):
        yield cst.SimpleStatementLine([cst.Pass()])


def _return_none(node) -> Iterable:
    cst = _require_libcst()
    if (
        isinstance(node, cst.Return)
        and node.value is not None
        and not (isinstance(node.value, cst.Name) and node.value.value == "None")
    ):
        yield node.with_changes(value=cst.Name("None"))


def _swap_arguments(node) -> Iterable:
    cst = _require_libcst()
    if not isinstance(node, cst.Call):
        return
    args = list(node.args)
    for i in range(len(args) - 1):
        a, b = args[i], args[i + 1]
        if a.keyword or b.keyword or a.star or b.star:
            continue
        swapped = [*args[:i], a.with_changes(value=b.value), b.with_changes(value=a.value), *args[i + 2 :]]
        yield node.with_changes(args=swapped)


def _negate_condition(node) -> Iterable:
    cst = _require_libcst()
    if isinstance(node, (cst.If, cst.While)):
        test = (
            node.test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if not node.test.lpar else node.test
        )
        yield node.with_changes(test=cst.UnaryOperation(cst.Not(), test))


def extra_operators() -> list[tuple[type, Callable]]:
    cst = _require_libcst()
    return [
        (cst.BaseNumber, _number_minus_one),
        (cst.BaseStatement, _remove_statement),
        (cst.SimpleStatementLine, _remove_statement),
        (cst.Return, _return_none),
        (cst.Call, _swap_arguments),
        (cst.CSTNode, _negate_condition),
    ]


def _operator_name(fn: Callable) -> str:
    return fn.__name__.lstrip("_")


# ------------------------------------------------------------------ walking the source
def _snippet(module, node) -> str:
    text = " ".join(module.code_for_node(node).split())
    return text if len(text) <= MAX_CHANGE else text[: MAX_CHANGE - 3] + "..."


def generate_mutants(path: Path, display: str | None = None, only: Callable[[str], bool] | None = None) -> list[Mutant]:
    """Every single-change mutant of the Python file ``path``, in source order, without duplicates.

    ``only(scope)`` keeps the mutants inside the matching functions (tests use one function)."""
    cst = _require_libcst()
    from libcst.metadata import MetadataWrapper, PositionProvider

    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    display = display or str(path)
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    operators = _mutmut_operators() + extra_operators()

    found: list[tuple[object, object, str, str]] = []  # (node, mutated, operator, scope)

    class Visitor(cst.CSTVisitor):
        def __init__(self) -> None:
            self.scope: list[str] = []

        def on_visit(self, node) -> bool:
            if isinstance(node, (cst.Annotation, cst.Import, cst.ImportFrom, cst.Decorator)):
                return False
            if (
                isinstance(node, cst.SimpleStatementLine)
                and len(node.body) == 1
                and isinstance(node.body[0], cst.Expr)
                and isinstance(node.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
            ):
                return False  # a docstring
            start = positions.get(node)
            if start is not None and PRAGMA in lines[start.start.line - 1]:
                return False
            if isinstance(node, (cst.ClassDef, cst.FunctionDef)):
                self.scope.append(node.name.value)
            scope = ".".join(self.scope) or "<module>"
            if not isinstance(node, (cst.ClassDef, cst.FunctionDef, cst.Module)) and self.scope:
                for kind, operator in operators:
                    if isinstance(node, kind):
                        for mutated in operator(node):
                            found.append((node, mutated, _operator_name(operator), scope))
            return True

        def on_leave(self, original_node) -> None:
            if isinstance(original_node, (cst.ClassDef, cst.FunctionDef)):
                self.scope.pop()

    wrapper.visit(Visitor())

    starts = [0]
    for text in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(text))

    def offset(pos) -> int:
        return starts[pos.line - 1] + pos.column

    mutants: list[Mutant] = []
    occurrences: dict[tuple[str, str, str, str], int] = {}
    seen: set[str] = {source}
    for node, mutated, operator, scope in found:
        if only is not None and not only(scope):
            continue
        if operator == "remove_statement":
            target, replacement = node, "pass"
            change = f"remove: {_snippet(module, node)}"
        elif operator == "negate_condition":
            target = node.test
            replacement = f"not ({module.code_for_node(node.test)})"
            change = f"{_snippet(module, target)} -> {' '.join(replacement.split())}"
        else:
            target, replacement = node, module.code_for_node(mutated)
            change = f"{_snippet(module, node)} -> {_snippet(module, mutated)}"
        where = positions[target]
        new_source = source[: offset(where.start)] + replacement + source[offset(where.end) :]
        if new_source in seen:
            continue
        try:
            ast.parse(new_source)
        except SyntaxError:
            continue
        seen.add(new_source)
        line = where.start.line
        if operator != "remove_statement" and where.start.line == where.end.line:
            # a change within one line reads best as that line before and after
            before, after = lines[line - 1].strip(), new_source.splitlines()[line - 1].strip()
            change = f"{before} -> {after}" if len(before) + len(after) < 2 * MAX_CHANGE else change
        mutant = Mutant(display, line, scope, lines[line - 1].strip(), change, operator, new_source)
        count = occurrences.get(mutant.key, 0) + 1
        occurrences[mutant.key] = count
        if count > 1:  # the same change twice on one line: number the later ones, left to right
            mutant = Mutant(display, line, scope, mutant.line_text, f"{change} (#{count})", operator, new_source)
        mutants.append(mutant)
    return mutants
