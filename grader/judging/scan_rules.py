"""The rules of the integrity scan and the visitor that applies them to one file's syntax tree.

The rules are about *means*, not intent, and about what code can *reach*, not how it spells a
name: constant strings are folded through ``+``, ``%``, ``str.format``, f-strings, ``join`` and
the names they are bound to, so ``getattr(op, "_wit" + "ness")`` is read as ``op._witness``; a
name the scan cannot fold (``getattr(x, name)`` with ``name`` computed at run time) is flagged as
such; ``exec``, ``eval``, ``compile`` and ``__import__`` are flagged wherever they are named, not
only where they are called, and so is the ``builtins`` module itself (through which they are
reachable by any name). Each rule names a capability the lab never needs (the reference
solution, the student template and every correct variant in the tests use none of them), and
an allowlist of imports lists any module outside what the lab needs for review.

The visitor is linear in the size of the tree: an attribute chain (``np.a.a.a...``) is read once,
from its outermost link, and a folded string is built once per node and bounded in length.
Nothing here imports, runs or unpickles what it reads (:mod:`grader.judging.scan_files` reads
the files; :mod:`grader.judging.integrity` runs the scan in a bounded process).
"""

from __future__ import annotations

import ast
import unicodedata

from grader.judging.folding import Folder

SELF_NAMES = ("self", "cls")

RULES: dict[str, str] = {
    "import-grader": "imports the grader or the reference solution",
    "sys-modules": "reads or changes sys.modules, where the grader's loaded modules live",
    "gc": "uses the garbage collector (gc), which can reach any object in the process",
    "ctypes": "uses ctypes (raw memory and C calls)",
    "frames": "inspects call frames, tracers or function globals (sys._getframe, inspect, f_back, settrace)",
    "subclasses": "walks __subclasses__ to find classes it was not given",
    "patch-builtins": "patches builtins",
    "patch-numpy": "patches numpy",
    "fork": "forks the process",
    "threads": "starts threads or processes (threading, _thread, multiprocessing, concurrent.futures)",
    "mmap": "maps memory (mmap)",
    "ipc": "uses inter-process channels (System V IPC, shared memory, FIFOs)",
    "dynamic-code": "runs or loads code the scan cannot see (exec, eval, compile, importlib, __import__)",
    "compiled-code": "ships compiled code or an archive (a .pyc, a shared library, a zip), which this scan cannot read and the worker does not import",
    "patch-class": "changes a class or an object it was handed (through type(...), __class__, setattr, object.__setattr__, vars() or __dict__)",
    "grader-state": "reads or writes the grader's private state (an op's call log)",
    "unscanned": "holds Python this scan could not read in full, or the scan ran past its time or memory budget",
    "computed-name": "reaches an attribute or a namespace entry by a name computed at run time, which the scan cannot fold to a constant (getattr, setattr, delattr, hasattr, vars(), globals(), __dict__)",
    "builtins-module": "uses the builtins module itself, through which every built-in (exec and __import__ among them) is reachable by any name",
    "unusual-import": "imports a module the lab does not need (not numpy, not its own, not the standard library's computation and data structures): listed for review, not wrong in itself",
    "encoded-code": "holds Python code hidden in an encoding (base64, hex, zlib, gzip, bz2, lzma, marshal) that the scan decoded",
}

# The private package names a lab's pack is loaded under (grader.lab.loading.PACK_PREFIX): the
# grader's own code, which a worker holds in sys.modules (the lab's op vocabulary among it).
PACK_PREFIX = "_graphgrade_pack_"
# Modules whose import alone is a flag, by top-level (or full) name.
MODULE_RULES = {
    "grader": "import-grader",
    "reference": "import-grader",
    "gc": "gc",
    "ctypes": "ctypes",
    "inspect": "frames",
    "_thread": "threads",
    "multiprocessing": "threads",
    "concurrent.futures": "threads",
    "concurrent": "threads",
    "mmap": "mmap",
    "sysv_ipc": "ipc",
    "posix_ipc": "ipc",
    "_posixshmem": "ipc",
    "multiprocessing.shared_memory": "ipc",
    "zipimport": "dynamic-code",
    "importlib": "dynamic-code",
    "builtins": "builtins-module",
    "marshal": "dynamic-code",
    "runpy": "dynamic-code",
}
# Dotted names (after resolving import aliases) whose use is a flag.
NAME_RULES = {
    "sys.modules": "sys-modules",
    "sys._getframe": "frames",
    "sys._current_frames": "frames",
    "sys.settrace": "frames",
    "sys.setprofile": "frames",
    "threading.settrace": "frames",
    "threading.setprofile": "frames",
    "threading.Thread": "threads",
    "threading.Timer": "threads",
    "os.fork": "fork",
    "os.forkpty": "fork",
    "os.register_at_fork": "fork",
    "pty.fork": "fork",
    "os.mkfifo": "ipc",
    "os.memfd_create": "ipc",
    "os.eventfd": "ipc",
    "importlib.import_module": "dynamic-code",
    "importlib.util.spec_from_file_location": "dynamic-code",
    "importlib.machinery": "dynamic-code",
    "importlib.util.module_from_spec": "dynamic-code",
    "sys.path_hooks": "dynamic-code",
    "sys.meta_path": "dynamic-code",
    "sys.path_importer_cache": "dynamic-code",
    "builtins.exec": "dynamic-code",
    "builtins.eval": "dynamic-code",
    "builtins.compile": "dynamic-code",
}
# Attribute names that are a flag on any object.
ATTRIBUTE_RULES = {
    "__subclasses__": "subclasses",
    "f_back": "frames",
    "f_globals": "frames",
    "f_locals": "frames",
    "tb_frame": "frames",
    "gi_frame": "frames",
    "cr_frame": "frames",
    "ag_frame": "frames",
    "__globals__": "frames",
    "_getframe": "frames",
    "exec_module": "dynamic-code",
    "_witness": "grader-state",  # an op's log of its calls, once an attribute (GRADER_PRIVATE_ATTRIBUTES)
}
SYSV_CALLS = {
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semctl",
    "ftok",
    "shm_open",
    "add_key",
    "keyctl",
    "request_key",
}
PATCHED_MODULES = {"builtins": "patch-builtins", "numpy": "patch-numpy"}
# Calls that set or delete an attribute of the object they are given (the first argument).
SETTERS = {"setattr", "delattr", "object.__setattr__", "object.__delattr__", "type.__setattr__", "type.__delattr__"}
DICT_WRITES = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"}
DYNAMIC_CALLS = {"exec", "eval", "compile"}
IMPORT_CALLS = {"__import__", "importlib.import_module", "importlib.__import__"}


DYNAMIC_NAMES = {"exec", "eval", "compile", "__import__"}
# Calls that read or write an attribute by name: the index of the name among the arguments.
NAME_GETTERS = {"getattr": 1, "setattr": 1, "delattr": 1, "hasattr": 1}
BOUND_GETTERS = {"__getattribute__", "__getattr__", "__setattr__", "__delattr__"}
NAME_LISTS = {"operator.attrgetter", "operator.methodcaller", "attrgetter", "methodcaller"}
# Special attributes a submission may set on its own functions; any other dunder assigned on an
# object that is not its own (self, cls) changes how another object behaves.
# The allowlist of imports: what the lab needs (numpy; CuPy for the CUDA path) and the standard
# library's computation, data structures and plumbing that reach nothing of the grader. Any other
# module (or one of the submission's own) is listed for review, with its line: not wrong in itself.
LAB_MODULES = frozenset(
    {
        "__future__", "numpy", "cupy", "math", "cmath", "numbers", "decimal", "fractions", "random",
        "statistics", "functools", "itertools", "operator", "collections", "heapq", "bisect", "array",
        "copy", "dataclasses", "enum", "typing", "typing_extensions", "abc", "types", "contextlib",
        "warnings", "time", "re", "string", "textwrap", "json", "weakref", "threading", "os", "sys",
        "logging", "pprint", "reprlib", "traceback",
    }
)  # fmt: skip
LONG_CONSTANT = 64  # characters of a string constant worth decoding (scan_files)
HARMLESS_DUNDERS = {"__name__", "__qualname__", "__doc__", "__module__", "__wrapped__"}


def printable(text: str, limit: int = 200) -> str:
    """A name a submission chose, made safe to print: no control, format (bidi, zero-width)
    or surrogate characters."""
    out = "".join(ch if unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn") else "?" for ch in text)
    return out if len(out) <= limit else out[: limit - 1] + "…"


# Names through which a submission reaches code the scan cannot see, wherever they are named.


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.AST):
    """Every statement of a tree, outermost first (breadth-first), without entering expressions."""
    queue = [tree]
    for node in queue:
        yield node
        for field in _BODIES:
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                queue.extend(n for n in inner if isinstance(n, (ast.stmt, ast.excepthandler, ast.match_case)))


class Scanner(ast.NodeVisitor):
    """Flags for one file's tree: ``found`` maps (rule, line) to the message. Call
    :meth:`prepare` (aliases, bindings) before :meth:`visit`."""

    def __init__(self, file: str, own_modules: frozenset[str] = frozenset()) -> None:
        self.file = file
        self.own_modules = own_modules  # the submission's own modules, importable by name
        self.folder = Folder()
        self.found: dict[tuple[str, int], str] = {}
        self.aliases: dict[str, str] = {
            "np": "numpy",
            "numpy": "numpy",
            "sys": "sys",
            "os": "os",
            "builtins": "builtins",
            "__builtins__": "builtins",
        }
        self.class_aliases: set[str] = set()  # names bound to type(x) or x.__class__
        self.type_aliases: set[str] = {"type"}  # names bound to the built-in type itself
        self.long_constants: list[ast.Constant] = []

    def prepare(self, tree: ast.AST) -> None:
        """Imports (so aliases are known wherever they are), names bound to ``type``, to
        ``type(x)`` and to constant strings: one pass over the *statements*, outermost first (an
        expression holds none of these but a walrus, which is not followed: the rules that matter
        do not depend on it), so that a file of long expressions costs one pass, the visit's."""
        for node in _statements(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if isinstance(node, ast.Import):
                        self.aliases[alias.asname or alias.name.split(".")[0]] = (
                            alias.name if alias.asname else alias.name.split(".")[0]
                        )
                    elif node.level == 0 and node.module:
                        self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, (ast.Assign, ast.NamedExpr, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if node.value is None:
                    continue
                if self.is_type(node.value):
                    self.type_aliases.update(names)
                elif self.is_class_of(node.value):
                    self.class_aliases.update(names)
                for name in names:
                    self.folder.bind(name, node.value)
            elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor)):
                target = node.target
                for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                    self.folder.bind(name, None)

    def is_type(self, node: ast.AST) -> bool:
        """The built-in ``type`` itself, by any name bound to it."""
        if isinstance(node, ast.Name):
            return node.id in self.type_aliases
        return self.dotted(node) == "builtins.type"

    # --- helpers
    def flag(self, rule: str, node: ast.AST, detail: str) -> None:
        key = (rule, getattr(node, "lineno", 0))
        self.found.setdefault(key, f"{RULES[rule]}: {printable(detail)}")

    def dotted(self, node: ast.AST) -> str | None:
        """``np.testing.assert_allclose`` -> ``numpy.testing.assert_allclose`` (None if not a
        name rooted in a known import)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id)
        if root is None:
            if node.id in DYNAMIC_CALLS or node.id == "__import__":
                root = f"builtins.{node.id}" if node.id != "__import__" else "__import__"
            else:
                return None
        return ".".join([root, *reversed(parts)])

    def module(self, name: str, node: ast.AST) -> None:
        if name.startswith(PACK_PREFIX):
            self.flag("import-grader", node, f"import {name}")
            return
        for candidate in (name, name.split(".")[0]):
            if candidate in MODULE_RULES:
                self.flag(MODULE_RULES[candidate], node, f"import {name}")
                return
        top = name.split(".")[0]
        if top not in LAB_MODULES and top not in self.own_modules:
            self.flag("unusual-import", node, f"import {name}")

    def name_used(self, name: str, node: ast.AST) -> None:
        for known, rule in NAME_RULES.items():
            if name == known or name.startswith(known + "."):
                self.flag(rule, node, name)
        if name.rsplit(".", 1)[-1] in SYSV_CALLS:
            self.flag("ipc", node, name)

    def is_class_of(self, node: ast.AST) -> bool:
        """``type(x)``, ``x.__class__`` or a name bound to one of them."""
        if isinstance(node, ast.Call) and self.is_type(node.func):
            return len(node.args) == 1
        if isinstance(node, ast.Attribute) and node.attr == "__class__":
            return True
        return isinstance(node, ast.Name) and node.id in self.class_aliases

    @staticmethod
    def is_own(node: ast.AST) -> bool:
        """``self`` or ``cls``: the submission's own object."""
        return isinstance(node, ast.Name) and node.id in SELF_NAMES

    def namespace_of(self, node: ast.AST) -> ast.AST | None:
        """The object whose namespace ``vars(x)`` or ``x.__dict__`` is, else None."""
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return node.value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and node.args:
            return node.args[0]
        return None

    def is_namespace(self, node: ast.AST) -> bool:
        """A namespace read by key: ``vars(x)``, ``x.__dict__``, ``globals()``, ``locals()``,
        ``__builtins__``, ``sys.modules``."""
        if self.namespace_of(node) is not None:
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("globals", "locals", "vars")
        ):
            return True
        return self.dotted(node) in ("builtins", "sys.modules")

    def reached_name(self, name_node: ast.AST, owner: ast.AST | None, how: str) -> None:
        """An attribute or namespace entry reached by the name ``name_node`` evaluates to: folded
        to a constant, it is checked as if written ``owner.name``; else it is a computed name."""
        name = self.folder.fold(name_node)
        if name is None:
            self.flag("computed-name", name_node, f"{how} with a name computed at run time")
            return
        self.attribute_name(name, name_node)
        if name in ("builtins", "__builtins__"):
            self.flag("builtins-module", name_node, f"{how}: {name!r}")
        if name in DYNAMIC_NAMES:
            self.flag("dynamic-code", name_node, f"{how}: {name!r}")
        owner_name = self.dotted(owner) if owner is not None else None
        if owner_name is not None:
            self.name_used(f"{owner_name}.{name}", name_node)

    def attribute_name(self, name: str, node: ast.AST) -> None:
        if name in ATTRIBUTE_RULES:
            self.flag(ATTRIBUTE_RULES[name], node, f".{name}")
        elif name in SYSV_CALLS:  # libc.shmget(...) through ctypes or any wrapper
            self.flag("ipc", node, f".{name}")

    def text(self, value: str, node: ast.AST) -> None:
        """A constant string, written or folded: names it spells that the lab never needs."""
        if value in ATTRIBUTE_RULES:  # getattr(cls, "__subclasses__")
            self.flag(ATTRIBUTE_RULES[value], node, repr(value))
        elif value in SYSV_CALLS:  # getattr(libc, "shmget")
            self.flag("ipc", node, repr(value))
        elif value.startswith("/dev/shm"):
            self.flag("ipc", node, repr(value))
        elif (value.split(".")[0] in ("grader", "reference") or value.startswith(PACK_PREFIX)) and all(
            part.isidentifier() for part in value.split(".")
        ):
            self.flag("import-grader", node, f"the module name {value!r}")  # importlib.import_module, passed on

    def patched_object(self, node: ast.AST, what: str) -> None:
        """A write to the attributes of ``node``: a class reached through type(...)/__class__, or
        any object but the submission's own (``self``/``cls``) through a namespace or a setter."""
        if self.is_class_of(node):
            self.flag("patch-class", node, f"{what} of a class reached through type(...) or __class__")
        elif not self.is_own(node) and not self.is_module(node):
            self.flag("patch-class", node, what)

    def is_module(self, node: ast.AST) -> bool:
        name = self.dotted(node)
        return name is not None and name.split(".")[0] in (*PATCHED_MODULES, "sys")

    def target(self, node: ast.AST) -> None:
        """An assignment or deletion target: patching a module we know is a flag, and so is
        changing a class through type(...) or __class__, or an object's namespace."""
        if isinstance(node, ast.Subscript):  # vars(op)["x"] = ..., op.__dict__["x"] = ...
            inner = node
            while isinstance(inner, ast.Subscript):
                inner = inner.value
            owner = self.namespace_of(inner)
            if owner is not None:
                self.patched_object(owner, "writes the namespace")
        while isinstance(node, ast.Subscript):  # __builtins__["len"] = ..., np.__dict__["x"] = ...
            node = node.value
        if isinstance(node, ast.Attribute):
            if self.is_class_of(node.value):
                self.flag(
                    "patch-class", node, f"assigns .{node.attr} of a class reached through type(...) or __class__"
                )
            elif node.attr in ("__class__", "__dict__") and not self.is_own(node.value):
                self.flag("patch-class", node, f"assigns .{node.attr}")
            elif (
                node.attr.startswith("__")
                and node.attr.endswith("__")
                and node.attr not in HARMLESS_DUNDERS
                and not self.is_own(node.value)
                and not self.is_module(node.value)
            ):  # kind(op).__call__ = f, whatever kind is bound to
                self.flag("patch-class", node, f"assigns .{node.attr} of an object that is not its own")
            name = self.dotted(node)
            if name is not None:
                root = name.split(".")[0]
                if root in PATCHED_MODULES:
                    self.flag(PATCHED_MODULES[root], node, f"assigns {name}")
                elif name.startswith("sys.modules"):
                    self.flag("sys-modules", node, f"assigns {name}")
        elif isinstance(node, ast.Name) and node.id == "__builtins__":
            self.flag("patch-builtins", node, "assigns __builtins__")
        elif isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                self.target(element)

    # --- visitors
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.module(alias.name, node)
            self.aliases[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module:
            self.module(node.module, node)
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                self.module(full, node)
                self.name_used(full, node)
                self.aliases[alias.asname or alias.name] = full
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        """A whole chain ``a.b.c.d`` at once, from its outermost link: each link's name, the
        dotted name once, then what the chain starts from (linear in the chain's length)."""
        inner: ast.AST = node
        while isinstance(inner, ast.Attribute):
            self.attribute_name(inner.attr, inner)
            inner = inner.value
        name = self.dotted(node)
        if name is not None:
            self.name_used(name, node)
        self.visit(inner)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in SYSV_CALLS:  # from sysv_ipc import *; shmget(...)
            self.name_used(node.id, node)
        if node.id in DYNAMIC_NAMES and isinstance(node.ctx, ast.Load):  # f = exec; f(code)
            self.flag("dynamic-code", node, node.id)
        elif node.id == "__builtins__":
            self.flag("builtins-module", node, "__builtins__")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self.folded(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self.folded(node)

    def folded(self, node: ast.AST) -> None:
        """A string the code builds from constants is read like a constant; otherwise its parts
        are visited."""
        value = self.folder.fold(node)
        if value is not None:
            self.text(value, node)
        else:
            self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self.is_namespace(node.value):  # globals()["ex" + "ec"], vars(op)[name]
            self.reached_name(node.slice, node.value, "a namespace read by key")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            self.text(node.value, node)
        if isinstance(node.value, (str, bytes)) and len(node.value) >= LONG_CONSTANT:
            self.long_constants.append(node)  # decoded afterwards, in case it hides code

    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func)
        first = node.args[0] if node.args else None
        self.names_reached(node, name)
        if name in IMPORT_CALLS:
            module = self.folder.fold(first)
            if module is not None:
                self.module(module, node)
            else:
                self.flag("dynamic-code", node, f"{name} of a computed name")
        elif name is not None and name.startswith("builtins.") and name.split(".", 1)[1] in DYNAMIC_CALLS:
            self.flag("dynamic-code", node, name.split(".", 1)[1])
        elif isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") and first is not None:
            target = self.dotted(first)
            if target is not None and target.split(".")[0] in PATCHED_MODULES:
                self.flag(PATCHED_MODULES[target.split(".")[0]], node, f"{node.func.id}({target}, ...)")
            else:
                self.patched_object(first, f"{node.func.id}(...)")
        elif self.setter_name(node.func) is not None and first is not None:
            self.patched_object(first, f"{self.setter_name(node.func)}(...)")
        if isinstance(node.func, ast.Attribute) and node.func.attr in DICT_WRITES:
            owner = self.namespace_of(node.func.value)
            if owner is not None:
                self.patched_object(owner, f"writes the namespace (.{node.func.attr})")
        self.generic_visit(node)

    def names_reached(self, node: ast.Call, name: str | None) -> None:
        """getattr(x, n), setattr(x, n, v), object.__getattribute__(x, n), x.__getattribute__(n),
        operator.attrgetter(n), vars(x).get(n): the name ``n`` is reached, folded or computed."""
        func, args = node.func, node.args
        if isinstance(func, ast.Name) and func.id in NAME_GETTERS or name in {f"builtins.{g}" for g in NAME_GETTERS}:
            getter = name.split(".")[-1] if name else func.id
            if len(args) > NAME_GETTERS[getter]:
                self.reached_name(args[NAME_GETTERS[getter]], args[0], f"{getter}(...)")
        elif isinstance(func, ast.Attribute) and func.attr in BOUND_GETTERS:
            on_type = isinstance(func.value, ast.Name) and func.value.id in ("object", "type")
            index = 1 if on_type else 0
            if len(args) > index:
                self.reached_name(args[index], args[0] if on_type else func.value, f".{func.attr}(...)")
        elif name in NAME_LISTS or (isinstance(func, ast.Name) and func.id in NAME_LISTS):
            for arg in args:
                self.reached_name(arg, None, "attrgetter(...)")
        elif isinstance(func, ast.Attribute) and func.attr in ("get", "pop", "setdefault", "__getitem__"):
            if args and self.is_namespace(func.value):
                self.reached_name(args[0], func.value, f"a namespace read by key (.{func.attr})")

    @staticmethod
    def setter_name(func: ast.AST) -> str | None:
        """``object.__setattr__`` and the like, by their written name."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            name = f"{func.value.id}.{func.attr}"
            return name if name in SETTERS else None
        return None

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            name = self.dotted(base)
            if name is not None:
                self.name_used(name, base)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self.target(t)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self.target(t)
        self.generic_visit(node)
