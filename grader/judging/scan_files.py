"""What the integrity scan reads of a submission, and how: a bounded walk of its folder (no link
followed), each Python file parsed with :mod:`ast` and checked by :mod:`grader.judging.scan_rules`,
every other file checked for what could run (a compiled module, a shared library, an archive) and
decoded in case it hides Python (base64, hex, zlib, gzip, bz2, lzma; marshal's code objects); long
string constants in Python files are decoded the same way.

It runs in a child of the scan's server (:mod:`grader.judging.scan_server`) under a time and memory
limit: whatever a submission holds costs that process, never the grader (``python -I -S -m
grader.judging.scan_files PATH`` runs it by hand). A flag is ``(rule, file, line, message)``.
Nothing here imports, runs or unpickles what it reads.
"""

from __future__ import annotations

import ast
import json
import os
import re
import stat
import sys
import threading
from pathlib import Path

from grader.judging.scan_rules import RULES, Scanner, printable

RawFlag = tuple[str, str, int, str]  # rule, file, line, message

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
MAX_DECODED_BYTES = 1 << 20  # what one decoding may produce
MAX_DECODE_DEPTH = 3  # layers: base64 of zlib of marshal, say
_BASE64 = re.compile(rb"[A-Za-z0-9+/=_-]+")
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_WHITESPACE = re.compile(rb"\s+")
# marshal's code object (TYPE_CODE, with or without FLAG_REF): a code object marshalled to bytes
MARSHAL_CODE = (b"c", b"\xe3")


def _flag(rule: str, file: str, line: int, detail: str) -> RawFlag:
    return (rule, file, int(line), f"{RULES[rule]}: {detail}")


# ------------------------------------------------------------------ Python source
# CPython 3.11's AST constructor keeps one recursion-depth count for all threads, and can raise a
# spurious "SystemError: AST constructor recursion depth mismatch" (cpython gh-106905): parses are
# taken one at a time, and that error is retried once.
_PARSE_LOCK = threading.Lock()


def parse(source: bytes | str, file: str) -> ast.Module:
    with _PARSE_LOCK:
        try:
            return ast.parse(source, filename=file)
        except SystemError:
            return ast.parse(source, filename=file)


def scan_source(
    source: bytes, file: str, decode_constants: bool = True, own_modules: frozenset[str] = frozenset()
) -> list[RawFlag]:
    """Flags for one file's bytes (decoded as Python would, coding cookie and all). ``own_modules``:
    the submission's own modules, which it may import by name."""
    try:
        tree = parse(source, file)
    except (SyntaxError, ValueError) as exc:  # Python cannot import it either: nothing to run
        line = getattr(exc, "lineno", None) or 0
        return [_flag("unscanned", file, int(line), f"not valid Python ({printable(type(exc).__name__)})")]
    except RecursionError:  # (a MemoryError is the process's budget: it ends the scan)
        return [_flag("unscanned", file, 0, "nested too deeply to parse")]
    scanner = Scanner(file, own_modules)
    encoded: list[RawFlag] = []
    try:
        scanner.prepare(tree)
        scanner.visit(tree)
        if decode_constants:
            encoded = _encoded_constants(scanner.long_constants, file)
    except RecursionError:
        return [_flag("unscanned", file, 0, "nested too deeply to scan")]
    found = [
        (rule, file, line, message)
        for (rule, line), message in sorted(scanner.found.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    ]
    return found + encoded


def _encoded_constants(constants: list[ast.Constant], file: str) -> list[RawFlag]:
    """Long string or bytes constants that decode (through at least one layer) to Python."""
    flags = []
    budget = MAX_TOTAL_BYTES
    for node in constants:
        value = node.value
        if len(value) > budget:
            break
        budget -= len(value)
        data = value.encode("utf-8", "replace") if isinstance(value, str) else value
        found = hidden_code(data, raw_python=False)
        if found is not None:
            flags.append(_flag("encoded-code", file, getattr(node, "lineno", 0), found))
    return flags


# ------------------------------------------------------------------ code hidden in an encoding
def _decodings(data: bytes) -> list[tuple[str, bytes]]:
    """Each way ``data`` decodes (bounded output), as (name, decoded bytes). (The decoders are
    imported here, for a scan in a process of its own; the scan server imports them once before
    it forks a child per submission: :func:`preload`.)"""
    import base64
    import binascii
    import bz2
    import lzma
    import zlib

    out = []
    compact = _WHITESPACE.sub(b"", data)
    if len(compact) >= 16 and _BASE64.fullmatch(compact):
        for name, decode in (("base64", base64.b64decode), ("base64url", base64.urlsafe_b64decode)):
            try:
                out.append((name, decode(compact + b"=" * (-len(compact) % 4))))
                break
            except (binascii.Error, ValueError):
                continue
    if len(compact) >= 16 and len(compact) % 2 == 0 and _HEX.fullmatch(compact):
        out.append(("hex", bytes.fromhex(compact.decode("ascii"))))
    for name, make in (
        ("zlib", lambda: zlib.decompressobj(47)),  # zlib or gzip, by their headers
        ("bz2", bz2.BZ2Decompressor),
        ("lzma", lzma.LZMADecompressor),
    ):
        try:
            decoded = make().decompress(data, MAX_DECODED_BYTES)
        except (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError):
            continue
        if decoded:
            out.append((name, decoded))
    return out


def _is_code(data: bytes) -> str | None:
    """``data`` as code: Python source with something in it that does work (an import, a call, a
    definition, an assignment), or marshal's code object; None if neither."""
    if data[:1] in MARSHAL_CODE and len(data) > 32:
        return "marshal"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 8 or "\x00" in text:
        return None
    try:
        tree = parse(text, "<decoded>")
    except (SyntaxError, ValueError, RecursionError):
        return None
    work = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.Call, ast.Lambda)
    return "Python" if any(isinstance(n, work) for n in ast.walk(tree)) else None


def _inside(source: bytes) -> str:
    """What the rules find in decoded Python, for the flag's message."""
    rules = sorted({flag[0] for flag in scan_source(source, "<decoded>", decode_constants=False)})
    return f" (inside: {', '.join(rules)})" if rules else ""


def hidden_code(data: bytes, raw_python: bool = True) -> str | None:
    """What ``data`` hides, as its layers (``"base64 -> zlib -> Python"``), or None. Plain Python
    counts only when ``raw_python``; marshal counts only beneath a decoding with a checksum or a
    header (zlib, gzip, bz2, lzma), where bytes do not start like a code object by chance."""
    frontier: list[tuple[tuple[str, ...], bytes]] = [((), data)]
    for depth in range(MAX_DECODE_DEPTH + 1):
        nxt = []
        for layers, blob in frontier:
            if layers or raw_python:
                kind = _is_code(blob)
                if kind == "Python" or (kind == "marshal" and set(layers) & {"zlib", "bz2", "lzma"}):
                    found = " -> ".join((*layers, kind)) if layers else "plain Python in a file that is not .py"
                    return found + _inside(blob) if kind == "Python" else found
            if depth < MAX_DECODE_DEPTH:
                nxt.extend(((*layers, name), decoded) for name, decoded in _decodings(blob))
        frontier = nxt[:8]
    return None


def preload() -> None:
    """Import what a scan imports on first use (the decoders, the ``.pyc`` magic), so that a
    process forked per submission after this call finds them loaded: most submissions hold a
    string the scan tries to decode, and each forked child would import them again (about 5 ms
    of CPU a submission)."""
    import base64  # noqa: F401
    import binascii  # noqa: F401
    import bz2  # noqa: F401
    import lzma  # noqa: F401
    import zlib  # noqa: F401

    _pyc_magic()


# ------------------------------------------------------------------ the submission's files
def _pyc_magic() -> bytes:
    import importlib.util

    return importlib.util.MAGIC_NUMBER


def holds_code(path: str) -> bool:
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
        if head.startswith(BINARY_MAGICS) or head.startswith(_pyc_magic()):
            return True
        tail = os.pread(fd, ZIP_TAIL_BYTES, max(0, size - ZIP_TAIL_BYTES))
        return ZIP_END in tail
    except OSError:
        return False
    finally:
        os.close(fd)


def _files(root: Path) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]], list[RawFlag]]:
    """The submission's Python files and its other regular files (relative names), walked
    iteratively without following links, within the bounds; and flags for what the bounds or
    compiled files left unread."""
    found: list[tuple[Path, str]] = []
    others: list[tuple[Path, str]] = []
    flags: list[RawFlag] = []
    if root.is_file():
        return [(root, root.name)], others, flags
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
                    _flag(
                        "unscanned",
                        ".",
                        0,
                        f"more than {MAX_ENTRIES} entries; the rest was not scanned",
                    )
                )
                return found, others, flags
            rel = Path(entry.path).relative_to(root).as_posix()
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                if depth + 1 >= MAX_DEPTH:
                    flags.append(
                        _flag(
                            "unscanned",
                            printable(rel),
                            0,
                            f"folders nested more than {MAX_DEPTH} deep",
                        )
                    )
                    return found, others, flags
                stack.append((Path(entry.path), depth + 1))
            elif stat.S_ISREG(mode):
                if entry.name.endswith(COMPILED_SUFFIXES) or (
                    not entry.name.endswith(".py") and holds_code(entry.path)
                ):
                    flags.append(_flag("compiled-code", printable(rel), 0, f"{printable(entry.name)}"))
                elif entry.name.endswith(".py"):
                    found.append((Path(entry.path), printable(rel)))
                else:
                    others.append((Path(entry.path), printable(rel)))
    return found, others, flags


def _read(path: Path, limit: int) -> bytes | None:
    """At most ``limit`` + 1 bytes of a regular file, without following a link or blocking."""
    try:
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW | os.O_NONBLOCK)) as fh:
            return fh.read(limit + 1)
    except OSError:
        return None


def scan_submission(path) -> list[RawFlag]:
    """Every flag for a submission (a directory, or one ``.py`` file), at most ``MAX_FLAGS``."""
    root = Path(path)
    files, others, flags = _files(root)
    own = frozenset(rel.split("/")[0].removesuffix(".py") for _, rel in files)
    total = 0
    for count, (file, rel) in enumerate(files):
        if count >= MAX_FILES:
            flags.append(_flag("unscanned", ".", 0, f"more than {MAX_FILES} Python files; the rest was not scanned"))
            break
        try:
            size = file.lstat().st_size
        except OSError:
            continue
        if size > MAX_FILE_BYTES or total + size > MAX_TOTAL_BYTES:
            flags.append(_flag("unscanned", rel, 0, f"{size} bytes is over the scan's limit"))
            continue
        source = _read(file, MAX_FILE_BYTES)
        if source is None:
            continue
        total += len(source)
        flags.extend(scan_source(source, rel, own_modules=own))
    for file, rel in others:  # what the rest of the budget allows, in the walk's order
        data = _read(file, MAX_FILE_BYTES)
        if data is None or len(data) > MAX_FILE_BYTES or total + len(data) > MAX_TOTAL_BYTES:
            continue
        total += len(data)
        found = hidden_code(data)
        if found is not None:
            flags.append(_flag("encoded-code", rel, 0, found))
    return flags[:MAX_FLAGS]


def main(argv: list[str]) -> int:
    """``python -I -S -m grader.judging.scan_files PATH``: the flags, one line of JSON on stdout
    (by hand; grading runs :func:`scan_submission` in a bounded child of the scan's server)."""
    print(json.dumps([list(flag) for flag in scan_submission(argv[1])]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
