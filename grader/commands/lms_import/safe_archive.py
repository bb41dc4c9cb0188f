"""Reading an LMS download as hostile input: a zip (or a folder) turned into a list of files in memory.

Nothing here writes to disk. Every entry is checked before a byte of it is read:

- its name: one made of the parts between ``/`` (``\\`` counts as ``/``, as Windows zips write
  it); an absolute name (``/x``, ``C:x``), a part ``..``, a NUL or a control character is refused;
  each part is made safe for every file system (``<>:"|?*`` become ``_``, trailing dots and
  spaces dropped), so that two names may become equal (the writer refuses the second);
- its kind: a regular file or a folder; a link, a device, a FIFO or a socket is refused;
- its size, against one :class:`Budget` shared by the whole download (the archives inside it
  included): at most ``max_entries`` entries, ``max_total_bytes`` bytes in all and
  ``max_entry_bytes`` in one entry, and a compression ratio of at most ``max_ratio`` for an
  entry over ``RATIO_FLOOR`` bytes (a zip bomb); an archive inside an archive is read at most
  ``max_depth`` deep.

A refused entry is one :class:`Refusal` (one line: where, and why); everything else in the
download is still read. A download that cannot be read at all (not a zip, more entries than
the budget) raises :class:`ArchiveError`, which the command prints as one line.
"""

from __future__ import annotations

import io
import os
import stat
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

RATIO_FLOOR = 1 << 20  # a small entry may compress as well as it likes
UNSAFE_CHARS = '<>:"|?*'
# What an operating system or a tool leaves beside the work: dropped, and counted.
LITTER_DIRS = ("__MACOSX", "__pycache__", ".git", ".ipynb_checkpoints", ".idea", ".vscode")
LITTER_FILES = (".DS_Store", "Thumbs.db", "desktop.ini", ".gitkeep")


class ArchiveError(Exception):
    """The download as a whole cannot be read; the message is one line."""


@dataclass(frozen=True)
class Limits:
    max_entries: int = 20_000
    max_total_bytes: int = 512 << 20
    max_entry_bytes: int = 32 << 20
    max_ratio: int = 200
    max_depth: int = 3  # the download, a student's zip, a zip in that


@dataclass
class Budget:
    """What the whole download may still hold; shared by every archive read from it."""

    limits: Limits = field(default_factory=Limits)
    entries: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class Entry:
    parts: tuple[str, ...]  # the safe relative path, at least one part
    data: bytes

    @property
    def name(self) -> str:
        return "/".join(self.parts)


@dataclass(frozen=True)
class Refusal:
    where: str  # the download and the entry's name as written there
    why: str

    def line(self) -> str:
        return f"{self.where}: {self.why}"


@dataclass(frozen=True)
class Contents:
    entries: tuple[Entry, ...]
    refused: tuple[Refusal, ...]
    litter: tuple[str, ...]  # names dropped as OS or tool litter


def _printable(name: str) -> str:
    return repr(name)[1:-1][:200]


def is_litter(parts: tuple[str, ...]) -> bool:
    return any(p in LITTER_DIRS for p in parts[:-1]) or parts[-1] in LITTER_FILES or parts[-1].startswith("._")


def safe_parts(name: str) -> tuple[str, ...] | str:
    """The name's parts made safe, or why it is refused."""
    if "\x00" in name or any(unicodedata.category(c) == "Cc" for c in name):
        return "a control character in the name"
    name = name.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":" and name[0].isalpha()):
        return "an absolute name (it would be written outside the folder)"
    parts: list[str] = []
    for raw in name.split("/"):
        if raw in ("", "."):
            continue
        if raw == "..":
            return "a name that climbs out of the folder (..)"
        part = unicodedata.normalize("NFC", raw)
        part = "".join("_" if c in UNSAFE_CHARS else c for c in part).rstrip(" .")
        if not part or part in ("..", "."):
            return "a name with nothing left once made safe"
        parts.append(part[:200])
    if not parts:
        return "an empty name"
    return tuple(parts)


def _take(budget: Budget, where: str, size: int) -> str | None:
    """Count one entry of ``size`` bytes against the budget; why not, when it does not fit."""
    limits = budget.limits
    if size > limits.max_entry_bytes:
        return f"{size} bytes, more than the {limits.max_entry_bytes} one file may hold"
    if budget.bytes + size > limits.max_total_bytes:
        return f"the download would pass {limits.max_total_bytes} bytes in all (a bomb?)"
    budget.bytes += size
    return None


def _count(budget: Budget, label: str, n: int = 1) -> None:
    budget.entries += n
    if budget.entries > budget.limits.max_entries:
        raise ArchiveError(f"{label}: more than {budget.limits.max_entries} entries (a bomb?); nothing read")


def read_zip(source: Path | bytes, label: str, budget: Budget, depth: int = 0) -> Contents:
    """Every regular file of a zip, in memory; each other entry refused or dropped, with a line."""
    if depth >= budget.limits.max_depth:
        raise ArchiveError(f"{label}: an archive nested more than {budget.limits.max_depth} deep")
    declared = _declared_entries(source)
    if declared is not None and budget.entries + declared > budget.limits.max_entries:
        raise ArchiveError(f"{label}: more than {budget.limits.max_entries} entries (a bomb?); nothing read")
    try:
        handle = zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ArchiveError(f"{label}: not a readable zip ({exc})") from None
    with handle:
        infos = handle.infolist()
        _count(budget, label, len(infos))
        entries: list[Entry] = []
        refused: list[Refusal] = []
        litter: list[str] = []
        for info in infos:
            where = f"{label}: {_printable(info.filename)}"
            why = _zip_entry_problem(info, budget.limits)
            parts = safe_parts(info.filename)
            if why is None and isinstance(parts, str):
                why = parts
            if why is not None:
                refused.append(Refusal(where, why))
                continue
            if info.is_dir():
                continue
            assert isinstance(parts, tuple)
            if is_litter(parts):
                litter.append(f"{label}: {'/'.join(parts)}")
                continue
            why = _take(budget, where, info.file_size)
            if why is not None:
                refused.append(Refusal(where, why))
                continue
            try:
                with handle.open(info) as stream:
                    data = stream.read(budget.limits.max_entry_bytes + 1)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError) as exc:
                refused.append(Refusal(where, f"cannot be read ({exc})"))
                continue
            entries.append(Entry(parts, data))
    return Contents(tuple(entries), tuple(refused), tuple(litter))


def _declared_entries(source: Path | bytes) -> int | None:
    """The entry count the zip's end record declares, read before the central directory is parsed
    (zipfile builds an object per entry first); 0xFFFF (a ZIP64 count) counts as too many."""
    tail_bytes = (1 << 16) + 22
    try:
        if isinstance(source, bytes):
            tail = source[-tail_bytes:]
        else:
            with open(source, "rb") as stream:
                stream.seek(0, os.SEEK_END)
                stream.seek(max(0, stream.tell() - tail_bytes))
                tail = stream.read()
    except OSError:
        return None
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) < at + 12:
        return None
    count = int.from_bytes(tail[at + 10 : at + 12], "little")
    return 1 << 30 if count == 0xFFFF else count


def _zip_entry_problem(info: zipfile.ZipInfo, limits: Limits) -> str | None:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        return "a link (never followed or written)"
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        return "a device, FIFO or socket (never written)"
    if info.flag_bits & 0x1:
        return "encrypted (cannot be read)"
    if info.file_size > RATIO_FLOOR and info.file_size > limits.max_ratio * max(info.compress_size, 1):
        return f"compressed more than {limits.max_ratio} to 1 ({info.compress_size} bytes to {info.file_size}; a bomb?)"
    return None


def read_tree(root: Path, label: str, budget: Budget) -> Contents:
    """Every regular file under a folder, in memory, links never followed (an unpacked download,
    or GitHub Classroom's clones)."""
    entries: list[Entry] = []
    refused: list[Refusal] = []
    litter: list[str] = []

    def walk(folder: Path, parts: tuple[str, ...]) -> None:
        if len(parts) > 32:
            refused.append(Refusal(f"{label}: {'/'.join(parts)}", "folders nested more than 32 deep"))
            return
        try:
            children = sorted(os.scandir(folder), key=lambda d: d.name)
        except OSError as exc:
            refused.append(Refusal(f"{label}: {'/'.join(parts) or '.'}", f"cannot be listed ({exc.strerror})"))
            return
        _count(budget, label, len(children))
        for child in children:
            where = f"{label}: {_printable('/'.join((*parts, child.name)))}"
            safe = safe_parts(child.name)
            if isinstance(safe, str):
                refused.append(Refusal(where, safe))
                continue
            path = (*parts, *safe)
            try:
                info = child.stat(follow_symlinks=False)
            except OSError as exc:
                refused.append(Refusal(where, f"cannot be read ({exc.strerror})"))
                continue
            if stat.S_ISLNK(info.st_mode):
                refused.append(Refusal(where, "a link (never followed or written)"))
            elif stat.S_ISDIR(info.st_mode):
                if child.name in LITTER_DIRS:
                    litter.append(f"{label}: {'/'.join(path)}/")
                else:
                    walk(Path(child.path), path)
            elif not stat.S_ISREG(info.st_mode):
                refused.append(Refusal(where, "a device, FIFO or socket (never written)"))
            elif is_litter(path):
                litter.append(f"{label}: {'/'.join(path)}")
            else:
                why = _take(budget, where, info.st_size)
                if why is not None:
                    refused.append(Refusal(where, why))
                    continue
                data = _read_regular(Path(child.path), budget.limits.max_entry_bytes)
                if isinstance(data, str):
                    refused.append(Refusal(where, data))
                else:
                    entries.append(Entry(path, data))

    if not root.is_dir():
        raise ArchiveError(f"{label}: not a folder")
    walk(root, ())
    return Contents(tuple(entries), tuple(refused), tuple(litter))


def _read_regular(path: Path, limit: int) -> bytes | str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    with os.fdopen(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            return "no longer a regular file"
        data = stream.read(limit + 1)
    if len(data) > limit:
        return f"more than the {limit} bytes one file may hold"
    return data


def read_download(path: Path, budget: Budget) -> Contents:
    """A download as the platform gives it (a zip), or already unpacked (a folder)."""
    label = path.name or str(path)
    if path.is_dir():
        return read_tree(path, label, budget)
    if not path.is_file():
        raise ArchiveError(f"{path}: no such file or folder")
    return read_zip(path, label, budget)
