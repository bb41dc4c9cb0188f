"""What the origin tracer (grader.observe.origins) reads from a submission's source, once per file:
per line, the local names it binds, the names a test or an assignment reads, the calls on it, and
per plain ``return``, the tests whose branch holds it. Parsed with :mod:`ast` (never run), cached
by file name; a file that cannot be read or parsed has no facts."""

from __future__ import annotations

import ast
import functools

PLAIN_RETURN = (ast.Constant, ast.Name, ast.Attribute)  # hands back what was decided elsewhere


def bound_targets(node: ast.AST) -> tuple[list[str], list[str]]:
    """The attribute names and the plain local names an assignment or ``for`` statement binds."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
        targets = [node.target]
    else:
        return [], []
    attributes = [t.attr for target in targets for t in ast.walk(target) if isinstance(t, ast.Attribute)]
    names = [
        t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
    ]
    return attributes, names


@functools.lru_cache(maxsize=64)
def local_names(filename: str) -> dict[int, tuple[str, ...]]:
    """Per line of a source file: the local names it binds (``static = ...``, ``for a, b in ...``)."""
    tree = parsed(filename)
    found: dict[int, tuple[str, ...]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        names = bound_targets(node)[1]
        if names:
            found[node.lineno] = found.get(node.lineno, ()) + tuple(names)
    return found


@functools.lru_cache(maxsize=64)
def line_reads(filename: str) -> dict[int, tuple[tuple[str, ...], bool]]:
    """Per ``if``/``elif``/``while`` test and per assignment of local names: the local names the
    test or the assigned value reads, in order, and whether that value is one call
    (``key = self._graph_key(x)``: the name holds what the call returned)."""
    tree = parsed(filename)
    found: dict[int, tuple[tuple[str, ...], bool]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.If, ast.While)):
            value = node.test
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and bound_targets(node)[1]:
            value = node.value
        else:
            continue
        reads = [n.id for n in ast.walk(value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        found[node.lineno] = (tuple(dict.fromkeys(reads)), isinstance(value, ast.Call))
    return found


@functools.lru_cache(maxsize=64)
def guarding_tests(filename: str) -> dict[int, frozenset[int]]:
    """Per plain ``return`` (``return size``, ``return Mode.IDLE``): the lines of the
    ``if``/``elif`` tests whose branch holds it (``if size >= n:`` above ``return size``)."""
    tree = parsed(filename)
    found: dict[int, set[int]] = {}

    def walk(node: ast.AST, tests: frozenset[int]) -> None:
        for field, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            inner = tests | {node.lineno} if isinstance(node, ast.If) and field == "body" else tests
            for child in children:
                if isinstance(child, ast.Return) and (child.value is None or isinstance(child.value, PLAIN_RETURN)):
                    found.setdefault(child.lineno, set()).update(inner)
                elif isinstance(child, ast.AST) and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    walk(child, inner)
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    walk(child, frozenset())

    if tree is not None:
        walk(tree, frozenset())
    return {line: frozenset(tests) for line, tests in found.items()}


@functools.lru_cache(maxsize=64)
def calls_on(filename: str) -> dict[int, tuple[ast.Call, ...]]:
    """Per line of a source file: the calls that start on it."""
    tree = parsed(filename)
    found: dict[int, tuple[ast.Call, ...]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call):
            found[node.lineno] = found.get(node.lineno, ()) + (node,)
    return found


@functools.lru_cache(maxsize=64)
def parsed(filename: str) -> ast.AST | None:
    try:
        with open(filename, encoding="utf-8") as source:
            return ast.parse(source.read(), filename)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None
