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
        # the renderers' libraries, and numpy: the judge computes expected values with it
        *(_version(name, version, PackageNotFoundError) for name in ("jinja2", "markupsafe", "orjson", "numpy")),
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


def _open_regular(path: Path) -> int | None:
    """A descriptor of ``path`` when it is a regular file, opened without following a link or
    waiting on a FIFO; None when it is anything else or nothing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_mode & 0o170000 == 0o100000:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _chunks(path: Path, limit: int | None = None) -> list[bytes] | None:
    """The bytes of a regular file (up to ``limit``), in reads; None if there is no such file."""
    fd = _open_regular(path)
    if fd is None:
        return None
    chunks, size = [], 0
    try:
        while limit is None or size < limit:
            chunk = os.read(fd, _READ_CHUNK if limit is None else min(_READ_CHUNK, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return chunks
    except OSError:
        return None
    finally:
        os.close(fd)


def _file_digest(path: Path) -> tuple[int, str] | None:
    """(size, SHA-256) of a regular file; None if there is none."""
    chunks = _chunks(path)
    if chunks is None:
        return None
    h = hashlib.sha256()
    for chunk in chunks:
        h.update(chunk)
    return sum(map(len, chunks)), h.hexdigest()


def holds(path: Path, text: str) -> bool:
    """Whether ``path`` is a regular file whose bytes are ``text`` in UTF-8."""
    data = text.encode("utf-8")
    found = _file_digest(path)
    return found is not None and found == (len(data), hashlib.sha256(data).hexdigest())


def _manifest(out_dir: Path) -> dict | None:
    """The folder's manifest, when it is one of this format (not necessarily still true)."""
    chunks = _chunks(out_dir / MANIFEST, MAX_MANIFEST_BYTES + 1)
    if chunks is None:
        return None
    raw = b"".join(chunks)
    try:
        manifest = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if (
        len(raw) > MAX_MANIFEST_BYTES
        or not isinstance(manifest, dict)
        or manifest.get("format") != FORMAT
        or not isinstance(manifest.get("inputs"), str)
        or not isinstance(manifest.get("files"), dict)
    ):
        return None
    return manifest


def _vouched(manifest: dict, name: str, data: bytes) -> bool:
    recorded = manifest["files"].get(name)
    return isinstance(recorded, dict) and recorded == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def unchanged(out_dir: Path, digest: str, files: tuple[str, ...], judged: dict | None = None) -> bool:
    """Whether ``out_dir`` holds ``files`` exactly as they were written from inputs ``digest``.
    With ``judged`` (what the report was judged from: grader.commands.rejudging) and a manifest
    that records other judged inputs, the manifest is written again with these (the files stay)."""
    manifest = _manifest(out_dir)
    if manifest is None or manifest["inputs"] != digest or sorted(manifest["files"]) != sorted(files):
        return False
    for name in files:
        found = _file_digest(out_dir / name)
        recorded = manifest["files"][name]
        if found is None or not isinstance(recorded, dict) or recorded != {"size": found[0], "sha256": found[1]}:
            return False
    if judged is not None and manifest.get("judged") != judged:
        _write_manifest(out_dir, {**manifest, "judged": judged})
    return True


def previous_report(out_dir: Path, report_name: str = "report.json") -> tuple[bytes, dict] | None:
    """The bytes of the folder's report.json and what its manifest says it was judged from, when
    the manifest records both and the file's bytes are the ones it recorded; else None (the
    submission is judged whole)."""
    manifest = _manifest(out_dir)
    if manifest is None or not isinstance(manifest.get("judged"), dict):
        return None
    chunks = _chunks(out_dir / report_name)
    if chunks is None:
        return None
    data = b"".join(chunks)
    return (data, manifest["judged"]) if _vouched(manifest, report_name, data) else None


def forget(out_dir: Path) -> None:
    """Remove the manifest, before the files it would vouch for are written."""
    try:
        os.unlink(out_dir / MANIFEST)
    except FileNotFoundError:
        pass


def record(out_dir: Path, digest: str, texts: dict[str, str], judged: dict | None = None) -> None:
    """Write the manifest for the files just written from inputs ``digest``, each by the digest
    of the text this process rendered (never of what is on disk now, which another process may
    have swapped in since); last, through a temporary file (a reader sees the whole manifest or
    none)."""
    entries = {}
    for name, text in texts.items():
        data = text.encode("utf-8")
        entries[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    manifest = {"format": FORMAT, "inputs": digest, "files": entries}
    if judged is not None:
        manifest["judged"] = judged
    _write_manifest(out_dir, manifest)


def _write_manifest(out_dir: Path, manifest: dict) -> None:
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f"{MANIFEST}.", dir=out_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, out_dir / MANIFEST)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
