"""What the similarity check reads of a submission: the Python a worker can import, real code first.

A worker imports ``.py`` files only (the lab's module file and the modules beside and beneath it), so
that is what is compared, within one bound per submission (:data:`MAX_SOURCE_CHARS`) that
padding cannot use to push the real code out:

1. the module file (the lab's student module);
2. the submission's own modules it imports, then the modules those import (breadth first,
   found by reading each file's ``import`` statements, never by running it);
3. every other ``.py`` file, in name order.

A file that is mostly data (string and number literals making up more than
:data:`DATA_SHARE` of a file over :data:`DATA_MIN_CHARS`: a generated table, a flood) is not
compared: a ``# file: NAME (not compared: ...)`` line says so in its place. What is past the
bound is cut. The folder is walked as the grader's copy walks it
(:func:`grader.run.copying.walk_submission`: bounded, no links, nothing hidden).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from grader.run.copying import SubmissionProblem, module_file, walk_submission
from grader.safetext import visible

MAX_SOURCE_CHARS = 512 * 1024  # per submission; the rest is not compared
DATA_MIN_CHARS = 16 * 1024  # a smaller file is always compared
DATA_SHARE = 0.5  # literals beyond this share of a larger file: data, not compared


def default_template() -> Path:
    import student_template

    return Path(student_template.__file__).resolve().parent


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(MAX_SOURCE_CHARS + 1)
    except OSError:
        return None


def literal_share(text: str) -> float:
    """The share of ``text``'s characters inside string and number literals, as far as it
    tokenizes (a file cut at the bound ends inside a statement)."""
    if not text:
        return 0.0
    literal = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.STRING, tokenize.NUMBER):
                literal += len(token.string)
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass  # what was read so far decides
    return literal / len(text)


def is_mostly_data(text: str) -> bool:
    return len(text) > DATA_MIN_CHARS and literal_share(text) > DATA_SHARE


def imported_names(text: str) -> list[str]:
    """Module names ``text`` imports (``import a.b``, ``from a import b``, ``from . import b``), in
    order; none when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if base:
                names.append(base)
            names.extend(f"{base}.{alias.name}" if base else alias.name for alias in node.names)
    return names


def _module_files(name: str, files: set[str]) -> list[str]:
    """The submission's files a module name can mean: ``a/b.py`` or ``a/b/__init__.py`` for
    ``a.b``, and each package ``__init__.py`` on the way."""
    parts = name.split(".")
    found = []
    for depth in range(1, len(parts) + 1):
        stem = "/".join(parts[:depth])
        for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
            if candidate in files:
                found.append(candidate)
    return found


def reading_order(texts: dict[str, str]) -> list[str]:
    """The order files are read in: the module file, the modules it imports (breadth first), the rest by name."""
    files = set(texts)
    order: list[str] = []
    try:
        queue = [module_file(sorted(files), "")]  # at the top, or the one deeper (in the handout's package folder)
    except SubmissionProblem:
        queue = []
    while queue:
        rel = queue.pop(0)
        if rel in order:
            continue
        order.append(rel)
        for name in imported_names(texts[rel]):
            queue.extend(f for f in _module_files(name, files) if f not in order)
    return order + sorted(files.difference(order))


def submission_source(path: Path) -> str:
    """A submission's importable Python as one text: each file after a ``# file:`` line, in
    :func:`reading_order`, data files named but not compared, at most MAX_SOURCE_CHARS."""
    path = Path(path)
    texts: dict[str, str] = {}
    if path.is_file():
        text = _read(path)
        if text is not None:
            texts[path.name] = text  # the module file by its own name, as any other
    elif path.is_dir():
        try:  # bounded and iterative, as the grader's copy is; no links, nothing hidden
            regular = walk_submission(path)[1]
        except (OSError, SubmissionProblem):
            return ""  # not graded either (its report says why): nothing to compare
        for rel in regular:
            if rel.endswith(".py"):
                text = _read(path / rel)
                if text is not None:
                    texts[Path(rel).as_posix()] = text
    parts, total = [], 0
    for rel in reading_order(texts):
        text = texts[rel]
        if is_mostly_data(text):
            part = f"# file: {visible(rel, keep='')} (not compared: mostly data, {len(text):,} characters or more)\n"
        else:
            part = f"# file: {visible(rel, keep='')}\n{text}\n"  # no name splits its header line
        parts.append(part)
        total += len(part)
        if total >= MAX_SOURCE_CHARS:
            break
    return "".join(parts)[:MAX_SOURCE_CHARS]
