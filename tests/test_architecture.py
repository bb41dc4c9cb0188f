"""The shape of the code, checked from its source with :mod:`ast` (nothing is imported):

- no module uses another module's private name (``from x import _y``, ``x._y``, a private
  attribute of an object another module owns, or a private module from outside its package);
- the import graph of ``grader`` and ``reports`` has no cycle, counting imports inside
  functions too (a lazy import hides a cycle from Python, not from the reader);
- the contract names are the same in the grader (``grader.spec_model``) and the reference
  (``reference/__init__.py``): the grader must not import the reference to learn them;
- no module of the product (or of its benchmarks) is over 600 lines: one job a module.

Each scanner is also run on a small made-up package, so that a scanner that sees nothing
cannot pass for a clean tree.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUR_PACKAGES = ("grader", "reports", "reference")
# reference/mutants/ patches the reference's private methods by design (each mutant is the
# reference with one mistake); it is graded, not imported by the grader.
PRIVATE_SCAN = (ROOT / "grader", ROOT / "reports", ROOT / "reference")
PRIVATE_SKIP = (ROOT / "reference" / "mutants",)
CYCLE_SCAN = (ROOT / "grader", ROOT / "reports")

# Uses of another module's private name that are known and owned elsewhere, as
# (file, "module.name"). Each entry must still occur (a stale entry fails too): remove it
# with the use.
KNOWN_PRIVATE_USES: set[tuple[str, str]] = set()


# ------------------------------------------------------------------ reading the source
@dataclass(frozen=True)
class Module:
    name: str  # dotted
    path: Path
    tree: ast.Module

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def read_modules(roots, skip=(), base: Path = ROOT) -> dict[str, Module]:
    modules = {}
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            if any(path.is_relative_to(s) for s in skip) or "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join(parts)
            modules[name] = Module(name, path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return modules


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def import_target(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` reads from."""
    if not node.level:
        return node.module or ""
    base = module.package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def ours(dotted: str, packages=OUR_PACKAGES) -> bool:
    return dotted.split(".")[0] in packages


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int


def _is_type_checking_block(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(module: Module, known: dict[str, Module]) -> list[Edge]:
    """Every import of a module in ``known``, at any depth (module level or in a function):
    ``from pkg import mod`` is an import of ``pkg.mod`` when that is a module, else of ``pkg``."""
    edges = []
    type_only = {
        id(n)
        for block in ast.walk(module.tree)
        if _is_type_checking_block(block)
        for stmt in block.body
        for n in ast.walk(stmt)
    }
    for node in ast.walk(module.tree):
        if id(node) in type_only:
            continue  # never runs: annotations only (the standard way a type refers back)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    edges.append(Edge(module.name, alias.name, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            target = import_target(module, node)
            for alias in node.names:
                if f"{target}.{alias.name}" in known:
                    edges.append(Edge(module.name, f"{target}.{alias.name}", node.lineno))
                elif target in known:
                    edges.append(Edge(module.name, target, node.lineno))
    return [e for e in edges if e.target != module.name]


# ------------------------------------------------------------------ private names
def defined_private_names(module: Module) -> set[str]:
    """Private names a module defines: functions, classes, variables, attributes it assigns
    (``self._x = ...``), parameters and ``__slots__`` entries."""
    names = set()
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
        ):
            names |= {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return {n for n in names if is_private(n)}


def module_aliases(module: Module, known_names: set[str], packages=OUR_PACKAGES) -> dict[str, str]:
    """Local names bound to one of our modules by an import anywhere in the file."""
    aliases = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if ours(alias.name, packages):
                    aliases[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
        elif isinstance(node, ast.ImportFrom):
            target = import_target(module, node)
            for alias in node.names:
                if f"{target}.{alias.name}" in known_names:
                    aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
    return aliases


def dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


@dataclass(frozen=True)
class PrivateUse:
    file: str
    line: int
    name: str  # "module.name" (or "?._name" for an object's attribute owned elsewhere)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: uses {self.name}"


def private_uses(modules: dict[str, Module], base: Path = ROOT, packages=OUR_PACKAGES) -> list[PrivateUse]:
    """Every use, in one module, of a private name another module owns."""
    known_names = set(modules)
    defined = {name: defined_private_names(m) for name, m in modules.items()}
    found: set[PrivateUse] = set()
    for module in modules.values():
        rel = module.path.relative_to(base).as_posix()
        aliases = module_aliases(module, known_names, packages)
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ImportFrom):
                target = import_target(module, node)
                if not ours(target, packages):
                    continue
                parts = target.split(".")
                for i, part in enumerate(parts):  # a private module, from outside its package
                    if is_private(part) and not (module.name + ".").startswith(".".join(parts[:i]) + "."):
                        found.add(PrivateUse(rel, node.lineno, target))
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    if not is_private(alias.name) or target == module.name:
                        continue
                    if full in known_names and (module.name + ".").startswith(target + "."):
                        continue  # a package's own private submodule, used inside the package
                    found.add(PrivateUse(rel, node.lineno, full))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    for i, part in enumerate(parts):
                        if (
                            ours(alias.name, packages)
                            and is_private(part)
                            and not (module.name + ".").startswith(".".join(parts[:i]) + ".")
                        ):
                            found.add(PrivateUse(rel, node.lineno, alias.name))
            elif isinstance(node, ast.Attribute) and is_private(node.attr):
                chain = dotted(node.value)
                if chain and chain[0] in aliases:  # module._name, pkg.module._name
                    owner = ".".join([aliases[chain[0]], *chain[1:]])
                    if owner in known_names or ours(owner, packages):
                        if owner != module.name:
                            found.add(PrivateUse(rel, node.lineno, f"{owner}.{node.attr}"))
                        continue
                if chain and chain[0] in ("self", "cls") and len(chain) == 1:
                    continue
                if node.attr not in defined[module.name] and any(
                    node.attr in names for other, names in defined.items() if other != module.name
                ):
                    owners = sorted(
                        other for other, names in defined.items() if node.attr in names and other != module.name
                    )
                    found.add(PrivateUse(rel, node.lineno, f"{'|'.join(owners)}:<object>.{node.attr}"))
    return sorted(found, key=lambda u: (u.file, u.line, u.name))


# ------------------------------------------------------------------ cycles
def import_cycles(modules: dict[str, Module]) -> list[list[Edge]]:
    """One cycle (as its edges) per strongly connected part of the import graph that has one."""
    graph: dict[str, list[Edge]] = {name: [] for name in modules}
    for module in modules.values():
        seen = set()
        for edge in imports_of(module, modules):
            if edge.target not in seen:
                seen.add(edge.target)
                graph[module.name].append(edge)
    # Tarjan's strongly connected components, then a shortest cycle inside each.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for e in graph[v]:
            if e.target not in index:
                visit(e.target)
                low[v] = min(low[v], low[e.target])
            elif e.target in on_stack:
                low[v] = min(low[v], index[e.target])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                parts.append(part)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for part in parts:
        start = min(part)
        paths = {start: []}  # breadth first from start, back to start, inside the part
        queue = [start]
        cycle = None
        while queue and cycle is None:
            v = queue.pop(0)
            for e in graph[v]:
                if e.target == start:
                    cycle = [*paths[v], e]
                    break
                if e.target in part and e.target not in paths:
                    paths[e.target] = [*paths[v], e]
                    queue.append(e.target)
        cycles.append(cycle)
    return cycles


def describe(cycle: list[Edge], modules: dict[str, Module], base: Path = ROOT) -> str:
    hops = [f"{e.source} ({modules[e.source].path.relative_to(base).as_posix()}:{e.line})" for e in cycle]
    return " -> ".join([*hops, cycle[0].source])


# ------------------------------------------------------------------ the tree
@functools.cache
def tree_private_uses() -> tuple[PrivateUse, ...]:
    return tuple(private_uses(read_modules(PRIVATE_SCAN, PRIVATE_SKIP)))


def test_no_module_uses_another_modules_private_name():
    uses = tree_private_uses()
    new = [u for u in uses if (u.file, u.name) not in KNOWN_PRIVATE_USES]
    assert not new, (
        "private names used outside the module that owns them (give them a public name there):\n"
        + "\n".join(map(str, new))
    )


def test_known_private_uses_are_not_stale():
    uses = {(u.file, u.name) for u in tree_private_uses()}
    stale = sorted(KNOWN_PRIVATE_USES - uses)
    assert not stale, f"these are fixed: remove them from KNOWN_PRIVATE_USES: {stale}"


def test_the_import_graph_of_grader_and_reports_has_no_cycle():
    modules = read_modules(CYCLE_SCAN)
    assert {"grader.commands.cli", "grader.commands.grade", "reports.html", "reports.view.cases"} <= set(modules)
    cycles = import_cycles(modules)
    assert not cycles, "import cycles (module-level and function-level imports):\n" + "\n".join(
        describe(c, modules) for c in cycles
    )


def test_the_grader_and_the_reference_name_the_same_contract():
    """The lab keeps its own list in lab.yaml (the grader never imports the reference: a student kit has none)."""

    def constant(path: Path, name: str, namespace: dict | None = None):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        env = dict(namespace or {})
        for node in tree.body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign) and node.value
                else []
            )
            for t in targets:
                if isinstance(t, ast.Name):
                    try:
                        env[t.id] = eval(
                            compile(ast.Expression(node.value), str(path), "eval"), {}, env
                        )  # literals and tuple sums only
                    except Exception:  # noqa: BLE001 - not a constant this test needs
                        pass
        return env[name]

    import yaml

    lab = yaml.safe_load((ROOT / "labs" / "cudagraph" / "lab.yaml").read_text(encoding="utf-8"))
    entry_points = lab["student"]["entry_points"]
    grader_names = tuple(e["name"] for e in entry_points)
    classes = tuple(e["name"] for e in entry_points if e["kind"] in ("class", "enum"))
    reference_names = constant(ROOT / "reference" / "__init__.py", "CONTRACT_NAMES")
    assert len(set(grader_names)) == len(grader_names) and len(set(reference_names)) == len(reference_names)
    assert set(grader_names) == set(reference_names), (
        f"only in labs/cudagraph/lab.yaml: {sorted(set(grader_names) - set(reference_names))}; "
        f"only in reference/__init__.py: {sorted(set(reference_names) - set(grader_names))}"
    )
    ref_classes = {
        n.name
        for n in ast.parse((ROOT / "reference" / "cudagraph.py").read_text(encoding="utf-8")).body
        if isinstance(n, ast.ClassDef)
    }
    assert set(classes) == set(reference_names) & ref_classes


# ------------------------------------------------------------------ the scanners themselves
def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Module]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return read_modules([tmp_path / "pkg"], base=tmp_path)


def test_the_private_name_scanner_finds_each_kind_of_use(tmp_path):
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/owner.py": """
                _LIMIT = 3
                def _helper(): ...
                class Thing:
                    __slots__ = ("_slot",)
                    def __init__(self):
                        self._slot = 1
                        self._state = 2
            """,
            "pkg/_hidden.py": "X = 1\n",
            "pkg/inner/__init__.py": "",
            "pkg/inner/_deep.py": "Y = 1\n",
            "pkg/outside.py": "import pkg.inner._deep\nfrom pkg.inner import _deep\n",
            "pkg/inner/user.py": """
                from pkg.owner import _LIMIT
                from pkg import owner
                import pkg.owner
                from pkg._hidden import X  # a private module, inside its package: allowed
                from pkg.inner._deep import Y
                def f(thing):
                    from ..owner import _helper
                    return owner._helper, pkg.owner._LIMIT, thing._state, thing._slot, owner.__name__
            """,
            "pkg/clean.py": """
                from pkg import _hidden
                from . import owner
                class Mine:
                    def __init__(self):
                        self._state = 0
                    def same(self, other):
                        return other._state, owner.Thing, _hidden.X
            """,
        },
    )
    found = {(u.file, u.name) for u in private_uses(modules, base=tmp_path, packages=("pkg",))}
    assert found == {
        ("pkg/inner/user.py", "pkg.owner._LIMIT"),
        ("pkg/inner/user.py", "pkg.owner._helper"),
        ("pkg/outside.py", "pkg.inner._deep"),
        ("pkg/inner/user.py", "pkg.clean|pkg.owner:<object>._state"),  # both define it; neither is user.py
        ("pkg/inner/user.py", "pkg.owner:<object>._slot"),
    }


def test_the_cycle_finder_sees_imports_inside_functions(tmp_path):
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "def later():\n    from pkg.c import thing\n",
            "pkg/c.py": "def thing():\n    from . import a\n",
            "pkg/d.py": "import pkg.a\n",
        },
    )
    (cycle,) = import_cycles(modules)
    text = describe(cycle, modules, base=tmp_path)
    assert text == "pkg.a (pkg/a.py:1) -> pkg.b (pkg/b.py:2) -> pkg.c (pkg/c.py:2) -> pkg.a"
    del modules["pkg.c"]
    assert import_cycles(modules) == []


def test_the_cycle_finder_leaves_out_type_only_imports(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
        "pkg/b.py": "from pkg import a\n",
    }
    assert import_cycles(_package(tmp_path / "typed", files)) == []
    files["pkg/a.py"] = "from typing import TYPE_CHECKING\nif not TYPE_CHECKING:\n    from pkg.b import B\n"
    assert len(import_cycles(_package(tmp_path / "runs", files))) == 1


# ------------------------------------------------------------------ the stages
# grader/'s folders are the stages of the pipeline; what every stage shares sits at the top of
# grader/. A module may import its own stage and the stages listed for it here, nothing else
# (a worker runs the interpreter, so run/ imports observe/; the worker side never imports a
# case's checks or the judge).
SHARED_MODULES = {
    "spec_model",
    "arrays",
    "snapshots",
    "framing",
    "observations",
    "validation",
    "safetext",
    "errors",
    "trusted_path",
    "trace_facts",
    "step_kinds",
    "values",
}
ENTRY_MODULES = {"grader.__main__": "grader.commands"}
# grader/lab/ (the lab being graded, read from its lab.yaml) is below every stage: any may ask it.
MAY_IMPORT: dict[str, set[str]] = {
    "grader.lab": {"grader.lab"},
    "grader": {"grader", "grader.lab"},
    "grader.suite": {"grader", "grader.lab", "grader.suite"},
    "grader.observe": {"grader", "grader.lab", "grader.observe"},
    "grader.run": {"grader", "grader.lab", "grader.observe", "grader.run"},
    "grader.judging": {"grader", "grader.lab", "grader.suite", "grader.run", "grader.judging"},
    "reports": {"grader", "grader.lab", "grader.judging", "reports"},
    "grader.commands": {
        "grader",
        "grader.lab",
        "grader.suite",
        "grader.observe",
        "grader.run",
        "grader.judging",
        "reports",
        "grader.commands",
    },
}
# Imports against that table, as (file, imported module); each must still occur (remove it with the use).
# None today: the audit's result types moved below the renderers (grader/judging/audit_results.py).
KNOWN_STAGE_EXCEPTIONS: set[tuple[str, str]] = set()


def stage_of(name: str, stages=MAY_IMPORT, entry=ENTRY_MODULES) -> str | None:
    """The stage a module belongs to: the longest stage name that is it or a package above it."""
    if name in entry:
        return entry[name]
    found = [s for s in stages if name == s or name.startswith(s + ".")]
    return max(found, key=len) if found else None


def misplaced_modules(
    modules: dict[str, Module], top: str = "grader", shared=SHARED_MODULES, stages=MAY_IMPORT, entry=ENTRY_MODULES
) -> list[str]:
    """Modules of ``top`` in no stage folder and not one of the shared ones."""
    bad = []
    for name, module in modules.items():
        parts = name.split(".")
        if parts[0] != top or name == top or name in entry:
            continue
        if len(parts) == 2 and not module.is_package and parts[1] in shared:
            continue
        if ".".join(parts[:2]) not in stages:
            bad.append(module.path.relative_to(ROOT).as_posix() if module.path.is_relative_to(ROOT) else name)
    return sorted(bad)


def stage_violations(
    modules: dict[str, Module], base: Path = ROOT, stages=MAY_IMPORT, entry=ENTRY_MODULES
) -> list[tuple[str, str, int]]:
    """Every import (at any depth, type-only ones left out) of a stage the importer may not import."""
    found = []
    for module in modules.values():
        source = stage_of(module.name, stages, entry)
        if source is None:
            continue
        for edge in imports_of(module, modules):
            target = stage_of(edge.target, stages, entry)
            if target is not None and target not in stages[source]:
                found.append((module.path.relative_to(base).as_posix(), edge.target, edge.line))
    return sorted(set(found))


@functools.cache
def tree_stage_violations() -> tuple[tuple[str, str, int], ...]:
    return tuple(stage_violations(read_modules(CYCLE_SCAN)))


def test_every_grader_module_sits_in_a_stage_folder_or_is_shared():
    modules = read_modules([ROOT / "grader"])
    assert {"grader.suite.loader", "grader.run.runner", "grader.observe.interpreter", "grader.judging.judge"} <= set(
        modules
    )
    bad = misplaced_modules(modules)
    assert not bad, (
        "modules outside the stage folders (put each in its stage's folder, or, if every stage "
        f"shares it, add it to SHARED_MODULES and README's Architecture): {bad}"
    )


def test_each_stage_imports_only_the_stages_it_may():
    new = [v for v in tree_stage_violations() if (v[0], v[1]) not in KNOWN_STAGE_EXCEPTIONS]
    assert not new, "imports of a stage this stage may not import (see MAY_IMPORT):\n" + "\n".join(
        f"{file}:{line}: imports {target}" for file, target, line in new
    )


def test_known_stage_exceptions_are_not_stale():
    seen = {(file, target) for file, target, _ in tree_stage_violations()}
    stale = sorted(KNOWN_STAGE_EXCEPTIONS - seen)
    assert not stale, f"these are fixed: remove them from KNOWN_STAGE_EXCEPTIONS: {stale}"


# reports/__init__.py does the file I/O; every other module of reports/ is a pure renderer.
IO_MODULES = {"os", "shutil", "tempfile", "zipfile", "subprocess", "socket"}
IO_METHODS = {"write_text", "write_bytes", "mkdir", "unlink", "rmdir", "touch", "chmod", "rename", "symlink_to"}


def impure_calls(modules: dict[str, Module], base: Path = ROOT, writer: str = "reports") -> list[str]:
    """Imports of an I/O module and calls that write files, in every module of the package but ``writer``."""
    found = []
    for module in modules.values():
        if module.name == writer:
            continue
        rel = module.path.relative_to(base).as_posix()
        for node in ast.walk(module.tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [(node.module or "").split(".")[0]]
            found += [f"{rel}:{node.lineno}: imports {n}" for n in names if n in IO_MODULES]
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name) and func.id == "open":
                    found.append(f"{rel}:{node.lineno}: calls open()")
                elif isinstance(func, ast.Attribute) and func.attr in IO_METHODS:
                    found.append(f"{rel}:{node.lineno}: calls .{func.attr}()")
    return sorted(found)


def test_the_renderers_are_pure():
    modules = read_modules([ROOT / "reports"])
    assert "reports.html" in modules and impure_calls({"reports": modules["reports"]}, writer="") != []
    bad = impure_calls(modules)
    assert not bad, "renderers that do file I/O (leave it to reports/__init__.py):\n" + "\n".join(bad)


def test_the_stage_checker_sees_what_a_stage_may_not_import(tmp_path):
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/shared.py": "",
            "pkg/__main__.py": "from pkg.top import main\n",
            "pkg/low/__init__.py": "",
            "pkg/low/a.py": "from pkg import shared\n",
            "pkg/low/b.py": "def late():\n    from pkg.top.c import x\n",
            "pkg/top/__init__.py": "",
            "pkg/top/c.py": "from pkg.low import a\nimport pkg.shared\n",
            "pkg/stray.py": "",
        },
    )
    stages = {"pkg": {"pkg"}, "pkg.low": {"pkg", "pkg.low"}, "pkg.top": {"pkg", "pkg.low", "pkg.top"}}
    entry = {"pkg.__main__": "pkg.top"}
    assert stage_violations(modules, base=tmp_path, stages=stages, entry=entry) == [("pkg/low/b.py", "pkg.top.c", 2)]
    assert stage_of("pkg.__main__", stages, entry) == "pkg.top" and stage_of("pkg.low.a", stages, entry) == "pkg.low"
    assert misplaced_modules(modules, top="pkg", shared={"shared"}, stages=stages, entry=entry) == ["pkg.stray"]
    writes = _package(
        tmp_path / "io",
        {
            "pkg/__init__.py": "import os\n",
            "pkg/pure.py": "from pathlib import Path\nTEXT = Path('t').read_text()\n",
            "pkg/dirty.py": "import shutil\ndef f(p):\n    p.write_text('x')\n    return open(p)\n",
        },
    )
    assert impure_calls(writes, base=tmp_path / "io", writer="pkg") == [
        "pkg/dirty.py:1: imports shutil",
        "pkg/dirty.py:3: calls .write_text()",
        "pkg/dirty.py:4: calls open()",
    ]


MAX_MODULE_LINES = 600  # the house rule: a module past it does more than one job; split it by job
SIZE_SCAN = (ROOT / "grader", ROOT / "reports", ROOT / "reference", ROOT / "benchmarks", ROOT / "student_template")


def test_no_module_is_over_600_lines():
    sizes = {
        path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8").count("\n")
        for folder in SIZE_SCAN
        for path in folder.rglob("*.py")
    }
    assert len(sizes) > 50  # the scan sees the tree
    assert {p: n for p, n in sizes.items() if n > MAX_MODULE_LINES} == {}
