"""What the origin tracer (grader.observe.origins) reads from a submission's source, once per file:
per line, the local names it binds, the names a test or an assignment reads, the calls on it, and
per ``return``, the tests whose branch holds it and what it reads or hands on; per test, the plain
return its branch holds; per function, its ``def`` line. Parsed with :mod:`ast` (never run), cached
by file name; a file that cannot be read or parsed has no facts."""

from __future__ import annotations

import ast
import functools

PLAIN_RETURN = (ast.Constant, ast.Name, ast.Attribute)  # hands back what was decided elsewhere
MUTATORS = frozenset({"append", "extend", "insert", "pop", "clear", "update", "add", "remove", "setdefault"})


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


def target_attributes(target: ast.AST) -> list[str]:
    """The attribute names an assignment's target changes (``self.graphs[key] = ...``: graphs;
    ``a.b, c.d = ...``: b, d), not those its subscripts only read (``buf[x.shape[0]:] = 0``)."""
    if isinstance(target, ast.Attribute):
        return [target.attr, *target_attributes(target.value)]
    if isinstance(target, ast.Subscript):
        return target_attributes(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for item in target.elts for name in target_attributes(item)]
    if isinstance(target, ast.Starred):
        return target_attributes(target.value)
    return []


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
    """Per ``if``/``elif``/``while`` test and per assignment of local names or attributes: the
    local names the test or the assigned value reads, in order, and whether that value is one call
    (``key = self._graph_key(x)``: the name holds what the call returned)."""
    tree = parsed(filename)
    found: dict[int, tuple[tuple[str, ...], bool]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.If, ast.While)):
            value = node.test
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and any(bound_targets(node)):
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
def return_reads(filename: str) -> dict[int, tuple[str, ...]]:
    """Per ``return`` line that computes its value: the attributes of ``self`` it reads, in order."""
    tree = parsed(filename)
    found: dict[int, tuple[str, ...]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Return) and node.value is not None and not isinstance(node.value, PLAIN_RETURN):
            reads = [
                n.attr
                for n in ast.walk(node.value)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
            ]
            found[node.lineno] = tuple(dict.fromkeys(reads))
    return found


@functools.lru_cache(maxsize=64)
def test_reads(filename: str) -> dict[int, tuple[str, ...]]:
    """Per ``if``/``elif``/``while`` test: the attributes of ``self`` it reads, in order
    (``if self._step_count < self.warmup_steps:``: _step_count, warmup_steps)."""
    tree = parsed(filename)
    found: dict[int, tuple[str, ...]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.If, ast.While)):
            reads = [
                n.attr
                for n in ast.walk(node.test)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
            ]
            if reads:
                found[node.lineno] = tuple(dict.fromkeys(reads))
    return found


@functools.lru_cache(maxsize=64)
def return_names(filename: str) -> dict[int, tuple[str, ...]]:
    """Per ``return`` line that computes its value (not a plain return): the local names it reads,
    in order (``return (batch, *x.shape[1:])``: batch, x)."""
    tree = parsed(filename)
    found: dict[int, tuple[str, ...]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Return) and node.value is not None and not isinstance(node.value, PLAIN_RETURN):
            names = [n.id for n in ast.walk(node.value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
            found[node.lineno] = tuple(dict.fromkeys(names))
    return found


@functools.lru_cache(maxsize=64)
def loop_sources(filename: str) -> dict[int, tuple[str, str]]:
    """Per ``for`` line over an attribute of ``self`` (``for item in self.items:``, also
    wrapped: ``reversed(self.items)``): its first target name and that attribute."""
    tree = parsed(filename)
    found: dict[int, tuple[str, str]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            attribute = next(
                (
                    n.attr
                    for n in ast.walk(node.iter)
                    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
                ),
                None,
            )
            if attribute is not None:
                found[node.lineno] = (node.target.id, attribute)
    return found


@functools.lru_cache(maxsize=64)
def list_lines(filename: str) -> dict[int, tuple[tuple[str, ...], str]]:
    """Per line: the local names a mutating method is called on (``run.clear()``, ``run.append(op)``),
    and, for a ``for`` over a plain name (``for op in group:``), that name ("" otherwise)."""
    tree = parsed(filename)
    found: dict[int, tuple[tuple[str, ...], str]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
            and isinstance(node.func.value, ast.Name)
        ):
            names, walked = found.get(node.lineno, ((), ""))
            found[node.lineno] = ((*names, node.func.value.id), walked)
        elif isinstance(node, ast.For) and isinstance(node.iter, ast.Name):
            found[node.lineno] = (found.get(node.lineno, ((), ""))[0], node.iter.id)
    return found


@functools.lru_cache(maxsize=64)
def call_returns(filename: str) -> frozenset[int]:
    """The lines of a ``return`` that hands back what a call made of this call's own values
    returned (``return self._rows(y, x)``). Not one that hands the call a stored value
    (``return self._rows(entry.output, x)``): a value kept from before is handed on there."""
    tree = parsed(filename)
    return frozenset(
        node.lineno
        for node in (ast.walk(tree) if tree is not None else ())
        if isinstance(node, ast.Return)
        and isinstance(node.value, ast.Call)
        and not any(isinstance(arg, ast.Attribute) for arg in node.value.args)
        and not any(isinstance(k.value, ast.Attribute) for k in node.value.keywords)
    )


@functools.lru_cache(maxsize=64)
def empty_starts(filename: str) -> frozenset[int]:
    """The lines that set an attribute to an empty start (``self.graphs = {}``, ``= []``, ``= 0``,
    ``= None``, ``= dict()``): a start decides nothing, so a value computed from it is not traced there."""
    tree = parsed(filename)
    found = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = node.value
            if (
                (isinstance(value, ast.Dict) and not value.keys)
                or (isinstance(value, (ast.List, ast.Set, ast.Tuple)) and not value.elts)
                or (isinstance(value, ast.Constant) and not value.value)
                or (
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Name)
                    and not value.args
                    and not value.keywords
                )
            ):
                found.add(node.lineno)
    return frozenset(found)


@functools.lru_cache(maxsize=64)
def guarded_returns(filename: str) -> dict[int, int]:
    """Per ``if`` test whose branch is a plain ``return`` (``if not self.enabled: return
    Mode.IDLE``): the line of that return."""
    tree = parsed(filename)
    found: dict[int, int] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Return):
            value = node.body[0].value
            if value is None or isinstance(value, PLAIN_RETURN):
                found[node.lineno] = node.body[0].lineno
    return found


@functools.lru_cache(maxsize=64)
def def_lines(filename: str) -> dict[int, int]:
    """Per function of a source file: the first line of its code (its first decorator's) -> its
    ``def`` line."""
    tree = parsed(filename)
    found: dict[int, int] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[min([d.lineno for d in node.decorator_list] + [node.lineno])] = node.lineno
    return found


@functools.lru_cache(maxsize=64)
def line_facts(filename: str) -> dict[int, tuple[tuple[str, ...], bool, bool, str]]:
    """Per line of a source file: the attribute names it assigns, whether it is an
    ``if``/``elif``/``while`` test, whether it is a ``return`` of a plain value, and the
    attribute that return hands back (``return self._count``: ``_count``), else ""."""
    tree = parsed(filename)
    if tree is None:
        return {}
    facts: dict[int, tuple[tuple[str, ...], bool, bool, str]] = {}

    def add(line: int, names=(), test=False, plain=False, attribute="") -> None:
        old = facts.get(line, ((), False, False, ""))
        facts[line] = (old[0] + tuple(names), old[1] or test, old[2] or plain, old[3] or attribute)

    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [name for target in targets for name in target_attributes(target)]
            if names:
                add(node.lineno, names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
            and isinstance(node.func.value, ast.Attribute)
        ):  # self.segments.append(...): a change of segments
            add(node.lineno, [node.func.value.attr])
        elif isinstance(node, (ast.If, ast.While)):
            add(node.lineno, test=True)
        elif isinstance(node, ast.Return):
            attribute = node.value.attr if isinstance(node.value, ast.Attribute) else ""
            add(node.lineno, plain=node.value is None or isinstance(node.value, PLAIN_RETURN), attribute=attribute)
    return facts


@functools.lru_cache(maxsize=64)
def parsed(filename: str) -> ast.AST | None:
    try:
        with open(filename, encoding="utf-8") as source:
            return ast.parse(source.read(), filename)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None
