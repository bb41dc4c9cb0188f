"""The folder of one student's submission as the grader expects it, written under ``--into`` only.

Each platform module hands over :class:`Submission` s (who, and the files of their latest
attempt, already read in memory by :mod:`safe_archive`). Here each becomes a folder:

- an uploaded zip is unpacked in place (through :func:`safe_archive.read_zip`, the same checks
  and the same budget as the download itself);
- folders that only wrap the submission are taken away (:func:`reroot`: a zip of ``my-lab/``
  gives the lab's module file at the top; a handout's package folder stays one folder down,
  where the grader looks too);
- two files whose names are equal once made safe (``a.py`` and ``A.py`` on a file system that
  ignores case) are refused, the second one, with a line.

Writing never follows a link and never replaces a file: every folder is opened relative to
its parent's descriptor with ``O_NOFOLLOW`` and every file created with ``O_EXCL``, so nothing
lands outside ``--into`` whatever the download holds or ``--into`` already held.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from grader.commands.lms_import.safe_archive import ArchiveError, Budget, Entry, Refusal, is_litter, read_zip
from grader.run.copying import module_file_name

FOLDER_NAME = re.compile(r"[^A-Za-z0-9._-]")
MAX_PARSE_BYTES = 1 << 20


@dataclass(frozen=True)
class Submission:
    ident: str  # the identifier the download carries: the folder's name, and export's match key
    name: str  # the student's name, for the summary only
    files: tuple[Entry, ...]
    late: bool = False
    notes: tuple[str, ...] = ()  # earlier attempts not kept, a group's other members, ...


@dataclass(frozen=True)
class Written:
    submission: Submission
    folder: Path
    kept: tuple[str, ...]
    notes: tuple[str, ...]
    has_entry: bool  # a module file the grader finds (the top one, else the only one)


def folder_name(ident: str) -> str:
    """The folder a submission is written to: graphgrade's folder-name rule (export matches on it)."""
    return FOLDER_NAME.sub("_", ident.strip()).strip(".") or "_"


def unpack_zips(sub: Submission, budget: Budget, refused: list[Refusal]) -> Submission:
    """Each uploaded ``.zip`` replaced by what it holds, in the folder it was uploaded to."""
    files: list[Entry] = []
    notes = list(sub.notes)
    for entry in sub.files:
        if not entry.parts[-1].lower().endswith(".zip"):
            files.append(entry)
            continue
        label = f"{sub.ident}/{entry.name}"
        try:
            inner = read_zip(entry.data, label, budget, depth=1)
        except ArchiveError as exc:
            refused.append(Refusal(label, str(exc).removeprefix(f"{label}: ")))
            continue
        refused.extend(inner.refused)
        files += [Entry((*entry.parts[:-1], *e.parts), e.data) for e in inner.entries if not is_litter(e.parts)]
        notes.append(f"unpacked {entry.name}")
    return replace(sub, files=tuple(files), notes=tuple(notes))


def reroot(sub: Submission) -> Submission:
    """Folders that only wrap the submission are taken away, so that the module file is at the
    top (a zip of ``my-lab/``) or one folder down, where the grader looks too (the handout's
    ``pkg/module.py``, with ``repo-main/`` around it taken away). A folder is a wrapper
    when it holds every file and the module file lies in it; a package, one holding
    ``__init__.py`` or a module that imports relatively (``from .counter import ...``), is kept:
    taking it away would break those imports. No file is ever dropped."""
    files, stripped = sub.files, []
    while files and all(len(e.parts) > 1 for e in files) and len({e.parts[0] for e in files}) == 1:
        top = files[0].parts[0]
        depths = [len(e.parts) - 1 for e in files if e.parts[-1] == module_file_name()]
        if not depths or (min(depths) == 1 and is_package(files, top)):
            break
        files = tuple(Entry(e.parts[1:], e.data) for e in files)
        stripped.append(top)
    if not stripped:
        return sub
    note = f"{'/'.join(stripped)}/ held everything: its contents are the submission"
    return replace(sub, files=files, notes=sub.notes + (note,))


def is_package(files: tuple[Entry, ...], top: str) -> bool:
    """Whether ``top`` must stay a folder: it holds ``__init__.py``, or one of its modules imports
    relatively (or cannot be read to tell)."""
    for e in files:
        if len(e.parts) != 2 or e.parts[0] != top or not e.parts[1].endswith(".py"):
            continue
        if e.parts[1] == "__init__.py" or len(e.data) > MAX_PARSE_BYTES:
            return True
        try:
            tree = ast.parse(e.data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # not Python the worker could import either: it decides nothing
        if any(isinstance(node, ast.ImportFrom) and node.level for node in ast.walk(tree)):
            return True
    return False


def graded_entry(kept: tuple[str, ...]) -> bool:
    """Whether the grader finds the lab's module file: the one at the top, else the only one
    deeper (a handout's ``pkg/module.py``)."""
    wanted = module_file_name()
    found = [name for name in kept if name.split("/")[-1] == wanted]
    return wanted in found or len(found) == 1


def write_all(into: Path, subs: list[Submission], refused: list[Refusal]) -> list[Written]:
    """Every submission under ``into`` (made if missing, refused if it holds anything already)."""
    try:
        into.mkdir(parents=True, exist_ok=True)
        if any(into.iterdir()):
            raise ArchiveError(f"--into {into}: not empty; give a new folder (nothing is ever overwritten)")
        root = os.open(into, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise ArchiveError(f"--into {into}: cannot use it ({exc.strerror or exc})") from None
    written: list[Written] = []
    taken: dict[str, str] = {}
    try:
        for sub in subs:
            name = folder_name(sub.ident)
            if name.casefold() in taken:
                refused.append(
                    Refusal(
                        f"{sub.ident} ({sub.name})",
                        f"the same folder name as {taken[name.casefold()]!r} once made safe; not written",
                    )
                )
                continue
            taken[name.casefold()] = sub.ident
            written.append(_write_one(root, into, name, sub, refused))
    finally:
        os.close(root)
    return written


def _write_one(root: int, into: Path, name: str, sub: Submission, refused: list[Refusal]) -> Written:
    os.mkdir(name, 0o755, dir_fd=root)
    folder = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=root)
    kept: list[str] = []
    seen: dict[tuple[str, ...], str] = {}  # each name taken (casefolded): the file, or "folder/", as written
    try:
        for entry in sub.files:
            clash = _clash(entry.parts, seen)
            if clash is not None:
                refused.append(
                    Refusal(f"{name}/{entry.name}", f"the same name as {clash!r} once made safe; not written")
                )
                continue
            why = _write_file(folder, entry)
            if why is not None:
                refused.append(Refusal(f"{name}/{entry.name}", why))
                continue
            key = tuple(p.casefold() for p in entry.parts)
            for i in range(1, len(key)):  # a folder's name is taken by that folder
                seen.setdefault(key[:i], "/".join(entry.parts[:i]) + "/")
            seen[key] = entry.name
            kept.append(entry.name)
    finally:
        os.close(folder)
    return Written(sub, into / name, tuple(kept), sub.notes, graded_entry(tuple(kept)))


def _clash(parts: tuple[str, ...], seen: dict[tuple[str, ...], str]) -> str | None:
    """The name already written that ``parts`` would collide with on a file system that ignores
    case: the same file, a file where a folder is needed (or the reverse), or a folder spelt
    otherwise (``A/`` beside ``a/``)."""
    key = tuple(p.casefold() for p in parts)
    if key in seen:
        return seen[key]
    for i in range(1, len(key)):
        taken = seen.get(key[:i])
        if taken is not None and taken != "/".join(parts[:i]) + "/":
            return taken
    return None


def _write_file(folder: int, entry: Entry) -> str | None:
    fds: list[int] = []
    try:
        at = folder
        for part in entry.parts[:-1]:
            try:
                os.mkdir(part, 0o755, dir_fd=at)
            except FileExistsError:
                pass
            at = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=at)
            fds.append(at)
        fd = os.open(entry.parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=at)
        with os.fdopen(fd, "wb") as stream:
            stream.write(entry.data)
    except OSError as exc:
        return f"not written ({exc.strerror or exc})"
    finally:
        for fd in fds:
            os.close(fd)
    return None
