"""The folder of one student's submission as the grader expects it, written under ``--into`` only.

Each platform module hands over :class:`Submission` s (who, and the files of their latest
attempt, already read in memory by :mod:`safe_archive`). Here each becomes a folder:

- an uploaded zip is unpacked in place (through :func:`safe_archive.read_zip`, the same checks
  and the same budget as the download itself);
- the folder is re-rooted at the shallowest ``cudagraph.py`` when that one is unique (a zip of
  ``my-lab/`` gives ``cudagraph.py`` at the top); the files outside it are listed, not written;
- two files whose names are equal once made safe (``a.py`` and ``A.py`` on a file system that
  ignores case) are refused, the second one, with a line.

Writing never follows a link and never replaces a file: every folder is opened relative to
its parent's descriptor with ``O_NOFOLLOW`` and every file created with ``O_EXCL``, so nothing
lands outside ``--into`` whatever the download holds or ``--into`` already held.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from grader.commands.lms_import.safe_archive import ArchiveError, Budget, Entry, Refusal, is_litter, read_zip

SUBMISSION_FILE = "cudagraph.py"
FOLDER_NAME = re.compile(r"[^A-Za-z0-9._-]")


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
    has_entry: bool  # cudagraph.py at the folder's top


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
    """The folder holding the shallowest ``cudagraph.py`` becomes the top, when that one is unique."""
    found = [e.parts[:-1] for e in sub.files if e.parts[-1] == SUBMISSION_FILE]
    if not found:
        return sub
    depth = min(len(f) for f in found)
    tops = {f for f in found if len(f) == depth}
    if depth == 0 or len(tops) != 1:
        return sub
    (top,) = tops
    inside = tuple(Entry(e.parts[depth:], e.data) for e in sub.files if e.parts[:depth] == top)
    outside = [e.name for e in sub.files if e.parts[:depth] != top]
    notes = [f"{SUBMISSION_FILE} found in {'/'.join(top)}/: that folder is the submission"]
    if outside:
        notes.append(
            f"left out, outside {'/'.join(top)}/: {', '.join(outside[:5])}{' ...' if len(outside) > 5 else ''}"
        )
    return replace(sub, files=inside, notes=sub.notes + tuple(notes))


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
    seen: dict[tuple[str, ...], str] = {}
    try:
        for entry in sub.files:
            key = tuple(p.casefold() for p in entry.parts)
            clash = next((seen[key[:i]] for i in range(1, len(key) + 1) if key[:i] in seen), None)
            if clash is not None:
                refused.append(
                    Refusal(f"{name}/{entry.name}", f"the same name as {clash!r} once made safe; not written")
                )
                continue
            why = _write_file(folder, entry)
            if why is not None:
                refused.append(Refusal(f"{name}/{entry.name}", why))
                continue
            for i in range(1, len(key)):  # a folder's name is taken by that folder
                seen.setdefault(key[:i], "/".join(entry.parts[:i]) + "/")
            seen[key] = entry.name
            kept.append(entry.name)
    finally:
        os.close(folder)
    has_entry = SUBMISSION_FILE in kept
    return Written(sub, into / name, tuple(kept), sub.notes, has_entry)


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
