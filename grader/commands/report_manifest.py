"""A submission's reports are written again only when something in them changed.

``grade`` writes five files per submission (report.json, report.html, staff.html, results.json,
junit.xml), all rendered from its :class:`~grader.judging.results.Report` by the renderers in
``reports/``, with the run's output options. So their bytes are a function of

- the report itself: every verdict, score, message, hint, title, weight and spec text it holds
  (``repr`` of the frozen dataclasses: every field, in order, whatever fields are added later);
- the options: the test visibility of hidden cases (Gradescope) and whether the staff page is
  written;
- what renders them: every file of the ``reports`` package (its modules, templates and style
  sheet), the grader's own source, the lab the pages name (its ``lab.yaml`` as loaded, and its
  own Python files), and the versions of Python, Jinja, MarkupSafe and orjson (report.json's writer).

:func:`inputs_digest` hashes all of it. After the files are written, a manifest
(:data:`MANIFEST`) is written last, atomically, beside them: that digest and, per file, its size
and SHA-256. On the next run, a submission whose digest is the manifest's, and whose files are
all still there with the bytes the manifest recorded, is not written again (no file is opened
for writing: the same inodes and mtimes). Anything else rewrites all of its files: a changed
input, a file edited, removed or replaced, a manifest that is missing, damaged, of another
format or larger than a manifest can be. The manifest is removed before any file is written,
so a write that stops half-way never leaves a manifest that vouches for the files.

The manifest is written only with the staff's files (a student kit's run writes the student's
files alone, and none of the grader's own).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from grader.judging.results import Report

MANIFEST = ".graphgrade-outputs.json"
FORMAT = 1
MAX_MANIFEST_BYTES = 64 << 10
_READ_CHUNK = 1 << 20


@functools.lru_cache(maxsize=1)
def renderers_digest() -> str:
    """Everything besides the report and the options that shapes the files (see the module's
    docstring); computed once per process (the grader's, before it forks its writers)."""
    from importlib.metadata import PackageNotFoundError, version

    from grader.lab import active as active_lab
    from grader.run.cache import grader_source_digest, hash_part, source_digest

    package = Path(__file__).resolve().parents[2] / "reports"
    h = hashlib.sha256(b"graphgrade renderers 1\0")
    for path in sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = path.relative_to(package).as_posix().encode()
        data = path.read_bytes()
        hash_part(h, rel)
        hash_part(h, data)
    lab = active_lab()
    for part in (
        grader_source_digest(),
        repr(lab),
        source_digest(lab.root),  # the lab's own code (its pack: check kinds, words the pages use)
        sys.version,
        *(_version(name, version, PackageNotFoundError) for name in ("jinja2", "markupsafe", "orjson")),
    ):
        data = part.encode("utf-8", "surrogateescape")
        hash_part(h, data)
    return h.hexdigest()


def _version(name: str, version, not_found) -> str:
    try:
        return f"{name} {version(name)}"
    except not_found:
        return f"{name} unknown"


def inputs_digest(report: Report, hidden_visibility: str, staff: bool) -> str:
    """The digest of everything a submission's files are rendered from."""
    from grader.run.cache import hash_part

    h = hashlib.sha256(b"graphgrade outputs 1\0")
    for part in (renderers_digest(), hidden_visibility, "staff" if staff else "student", repr(report)):
        data = part.encode("utf-8", "surrogateescape")
        hash_part(h, data)
    return h.hexdigest()


def _read_regular(path: Path, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of a regular file, opened without following a link or waiting on a
    FIFO; None if there is no such file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_mode & 0o170000 != 0o100000:
            return None
        chunks, size = [], 0
        while size < limit and (chunk := os.read(fd, min(_READ_CHUNK, limit - size))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _file_digest(path: Path) -> tuple[int, str] | None:
    """(size, SHA-256) of a regular file, read without following a link; None if there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not (st.st_mode & 0o170000 == 0o100000):  # a regular file only
            return None
        h = hashlib.sha256()
        size = 0
        while chunk := os.read(fd, _READ_CHUNK):
            h.update(chunk)
            size += len(chunk)
        return size, h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def holds(path: Path, text: str) -> bool:
    """Whether ``path`` is a regular file whose bytes are ``text`` in UTF-8."""
    data = text.encode("utf-8")
    found = _file_digest(path)
    return found is not None and found == (len(data), hashlib.sha256(data).hexdigest())


def unchanged(out_dir: Path, digest: str, files: tuple[str, ...]) -> bool:
    """Whether ``out_dir`` holds ``files`` exactly as they were written from inputs ``digest``."""
    raw = _read_regular(out_dir / MANIFEST, MAX_MANIFEST_BYTES + 1)
    if raw is None:
        return False
    try:
        manifest = json.loads(raw)
    except (ValueError, RecursionError):
        return False
    if (
        len(raw) > MAX_MANIFEST_BYTES
        or not isinstance(manifest, dict)
        or manifest.get("format") != FORMAT
        or manifest.get("inputs") != digest
        or not isinstance(manifest.get("files"), dict)
        or sorted(manifest["files"]) != sorted(files)
    ):
        return False
    for name in files:
        found = _file_digest(out_dir / name)
        recorded = manifest["files"][name]
        if found is None or not isinstance(recorded, dict) or recorded != {"size": found[0], "sha256": found[1]}:
            return False
    return True


def forget(out_dir: Path) -> None:
    """Remove the manifest, before the files it would vouch for are written."""
    try:
        os.unlink(out_dir / MANIFEST)
    except FileNotFoundError:
        pass


def record(out_dir: Path, digest: str, texts: dict[str, str]) -> None:
    """Write the manifest for the files just written from inputs ``digest``, each by the digest
    of the text this process rendered (never of what is on disk now, which another process may
    have swapped in since); last, through a temporary file (a reader sees the whole manifest or
    none)."""
    entries = {}
    for name, text in texts.items():
        data = text.encode("utf-8")
        entries[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    text = json.dumps({"format": FORMAT, "inputs": digest, "files": entries}, indent=1, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f"{MANIFEST}.", dir=out_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, out_dir / MANIFEST)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
