"""Integrity flags for staff: a static scan of a submission's Python for code that reaches into
the grader instead of doing the lab.

The sandbox is what stops such code; this scan tells staff that someone *tried*, so that a
person looks at it. It runs in the grader's own process, so it treats the submission as
untrusted text: it reads a bounded number of files of bounded size without following links,
parses them with :mod:`ast` (never imports or runs them), and never raises for anything a
file holds (a syntax error, a strange encoding, nesting too deep). A flag never changes a
score: scoring does not read them, and student-facing outputs do not show them.

The rules are deliberately about *means*, not intent: each names a capability the lab never
needs (the reference solution, the student template and every correct variant in the tests
use none of them), and which a submission would need to find, patch or signal the grader's
state, or another submission's.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import stat
import threading
import unicodedata
from pathlib import Path

from grader.judging.results import Flag

MAX_FILES = 200  # Python files scanned per submission
MAX_FILE_BYTES = 1 << 20
MAX_TOTAL_BYTES = 8 << 20
MAX_ENTRIES = 5000  # directory entries looked at, of every kind
MAX_DEPTH = 16
MAX_FLAGS = 50
COMPILED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".dylib", ".zip", ".egg", ".whl", ".pyz")
# What a file holds, whatever its name: a compiled module, a shared library or an archive
# (zipimport finds a zip by the end-of-central-directory record near its end, whatever precedes it).
BINARY_MAGICS = (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"PK\x03\x04")
ZIP_END = b"PK\x05\x06"
ZIP_TAIL_BYTES = (1 << 16) + 22  # the end record and the longest comment it may carry
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
    "unscanned": "holds Python this scan could not read in full",
}

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
    "_witness": "grader-state",  # grader.ops.GraderOp's log of its calls (GRADER_PRIVATE_ATTRIBUTES)
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


def _printable(text: str, limit: int = 200) -> str:
    """A name a submission chose, made safe to print: no control, format (bidi, zero-width)
    or surrogate characters."""
    out = "".join(ch if unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn") else "?" for ch in text)
    return out if len(out) <= limit else out[: limit - 1] + "…"


class _Scanner(ast.NodeVisitor):
    def __init__(self, file: str) -> None:
        self.file = file
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

    # --- helpers
    def flag(self, rule: str, node: ast.AST, detail: str) -> None:
        key = (rule, getattr(node, "lineno", 0))
        self.found.setdefault(key, f"{RULES[rule]}: {_printable(detail)}")

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
        for candidate in (name, name.split(".")[0]):
            if candidate in MODULE_RULES:
                self.flag(MODULE_RULES[candidate], node, f"import {name}")
                return

    def name_used(self, name: str, node: ast.AST) -> None:
        for known, rule in NAME_RULES.items():
            if name == known or name.startswith(known + "."):
                self.flag(rule, node, name)
        if name.rsplit(".", 1)[-1] in SYSV_CALLS:
            self.flag("ipc", node, name)

    def is_class_of(self, node: ast.AST) -> bool:
        """``type(x)``, ``x.__class__`` or a name bound to one of them."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type":
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
        if node.attr in ATTRIBUTE_RULES:
            self.flag(ATTRIBUTE_RULES[node.attr], node, f".{node.attr}")
        elif node.attr in SYSV_CALLS:  # libc.shmget(...) through ctypes or any wrapper
            self.flag("ipc", node, f".{node.attr}")
        name = self.dotted(node)
        if name is not None:
            self.name_used(name, node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in SYSV_CALLS:  # from sysv_ipc import *; shmget(...)
            self.name_used(node.id, node)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            if node.value in ATTRIBUTE_RULES:  # getattr(cls, "__subclasses__")
                self.flag(ATTRIBUTE_RULES[node.value], node, repr(node.value))
            elif node.value in SYSV_CALLS:  # getattr(libc, "shmget")
                self.flag("ipc", node, repr(node.value))
            elif node.value.startswith("/dev/shm"):
                self.flag("ipc", node, repr(node.value))
            elif node.value.split(".")[0] in ("grader", "reference") and all(
                part.isidentifier() for part in node.value.split(".")
            ):
                self.flag(
                    "import-grader", node, f"the module name {node.value!r}"
                )  # importlib.import_module, passed on

    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func)
        first = node.args[0] if node.args else None
        if name in IMPORT_CALLS:
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                self.module(first.value, node)
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


# Batches grade submissions on threads. CPython 3.11's AST constructor keeps one recursion-depth
# count for all threads, and can raise a spurious "SystemError: AST constructor recursion depth
# mismatch" (cpython gh-106905): parses are taken one at a time, and that error is retried once.
_PARSE_LOCK = threading.Lock()


def _parse(source: bytes, file: str) -> ast.Module:
    with _PARSE_LOCK:
        try:
            return ast.parse(source, filename=file)
        except SystemError:
            return ast.parse(source, filename=file)


def scan_source(source: bytes, file: str) -> list[Flag]:
    """Flags for one file's bytes (decoded as Python would, coding cookie and all)."""
    try:
        tree = _parse(source, file)
    except (SyntaxError, ValueError) as exc:  # Python cannot import it either: nothing to run
        line = getattr(exc, "lineno", None) or 0
        return [
            Flag(
                "unscanned",
                file,
                int(line),
                f"{RULES['unscanned']}: not valid Python ({_printable(type(exc).__name__)})",
            )
        ]
    except (RecursionError, MemoryError):
        return [Flag("unscanned", file, 0, f"{RULES['unscanned']}: nested too deeply to parse")]
    scanner = _Scanner(file)
    try:
        for node in ast.walk(tree):  # imports first, wherever they are, so aliases are known
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if isinstance(node, ast.Import):
                        scanner.aliases[alias.asname or alias.name.split(".")[0]] = (
                            alias.name if alias.asname else alias.name.split(".")[0]
                        )
                    elif node.level == 0 and node.module:
                        scanner.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, (ast.Assign, ast.NamedExpr)) and scanner.is_class_of(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                scanner.class_aliases.update(t.id for t in targets if isinstance(t, ast.Name))
        scanner.visit(tree)
    except RecursionError:
        return [Flag("unscanned", file, 0, f"{RULES['unscanned']}: nested too deeply to scan")]
    return [
        Flag(rule, file, line, message)
        for (rule, line), message in sorted(scanner.found.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    ]


def _holds_code(path: str) -> bool:
    """Whether a file that is not ``.py`` holds what an import or a loader can run: a compiled
    module (this Python's ``.pyc`` magic), a shared library or executable, or a zip archive
    (zipimport reads one whatever its name, and whatever bytes come before it). Reads the first
    bytes and at most the last 64 KiB, without following links."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        head = os.pread(fd, 16, 0)
        if head.startswith(BINARY_MAGICS) or head.startswith(importlib.util.MAGIC_NUMBER):
            return True
        tail = os.pread(fd, ZIP_TAIL_BYTES, max(0, size - ZIP_TAIL_BYTES))
        return ZIP_END in tail
    except OSError:
        return False
    finally:
        os.close(fd)


def _python_files(root: Path) -> tuple[list[tuple[Path, str]], list[Flag]]:
    """The submission's Python files (relative names), walked iteratively without following
    links, within the bounds; and flags for what the bounds or compiled files left unread."""
    found: list[tuple[Path, str]] = []
    flags: list[Flag] = []
    if root.is_file():
        return [(root, root.name)], flags
    stack: list[tuple[Path, int]] = [(root, 0)]
    seen = 0
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                flags.append(
                    Flag(
                        "unscanned",
                        ".",
                        0,
                        f"{RULES['unscanned']}: more than {MAX_ENTRIES} entries; the rest was not scanned",
                    )
                )
                return found, flags
            rel = Path(entry.path).relative_to(root).as_posix()
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                if depth + 1 >= MAX_DEPTH:
                    flags.append(
                        Flag(
                            "unscanned",
                            _printable(rel),
                            0,
                            f"{RULES['unscanned']}: folders nested more than {MAX_DEPTH} deep",
                        )
                    )
                    return found, flags
                stack.append((Path(entry.path), depth + 1))
            elif stat.S_ISREG(mode):
                if entry.name.endswith(COMPILED_SUFFIXES) or (
                    not entry.name.endswith(".py") and _holds_code(entry.path)
                ):
                    flags.append(
                        Flag("compiled-code", _printable(rel), 0, f"{RULES['compiled-code']}: {_printable(entry.name)}")
                    )
                elif entry.name.endswith(".py"):
                    found.append((Path(entry.path), _printable(rel)))
    return found, flags


def scan_submission(path) -> tuple[Flag, ...]:
    """Every flag for a submission (a directory, or one ``.py`` file), at most ``MAX_FLAGS``."""
    root = Path(path)
    files, flags = _python_files(root)
    total = 0
    for count, (file, rel) in enumerate(files):
        if count >= MAX_FILES:
            flags.append(
                Flag(
                    "unscanned",
                    ".",
                    0,
                    f"{RULES['unscanned']}: more than {MAX_FILES} Python files; the rest was not scanned",
                )
            )
            break
        try:
            size = file.lstat().st_size
            if size > MAX_FILE_BYTES or total + size > MAX_TOTAL_BYTES:
                flags.append(Flag("unscanned", rel, 0, f"{RULES['unscanned']}: {size} bytes is over the scan's limit"))
                continue
            with open(file, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW | os.O_NONBLOCK)) as fh:
                source = fh.read(MAX_FILE_BYTES + 1)
        except OSError:
            continue
        total += len(source)
        flags.extend(scan_source(source, rel))
    return tuple(flags[:MAX_FLAGS])


def _is_reference_package(path: Path) -> bool:
    """The installed reference solution: the grader's own code (it imports itself, and its CUDA
    path holds a lock), graded by ``graphgrade grade`` with no argument; not a student's work."""
    import importlib.util

    spec = importlib.util.find_spec("reference")
    try:
        return (
            spec is not None
            and bool(spec.submodule_search_locations)
            and Path(list(spec.submodule_search_locations)[0]).resolve() == path.resolve()
        )
    except OSError:
        return False


def integrity_flags(path) -> tuple[Flag, ...]:
    """The flags of one submission as grading records them: none for the installed reference."""
    path = Path(path)
    if _is_reference_package(path):
        return ()
    try:
        return scan_submission(path)
    except Exception as exc:  # noqa: BLE001 - a scan bug must cost neither the grade nor the batch
        return (
            Flag(
                "unscanned", ".", 0, f"{RULES['unscanned']}: the scan failed ({type(exc).__name__}); please report this"
            ),
        )
