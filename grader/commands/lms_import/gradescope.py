"""Gradescope's "Export Submissions" (a programming assignment): one zip, a folder per submission.

The zip holds ``assignment_<id>_export/`` with ``submission_metadata.yml`` and one folder
``submission_<id>/`` per active submission, the files as uploaded. The metadata (YAML written by
Ruby, so its keys are symbols: ``:submitters:``) maps each folder to its submitters (``:name:``,
``:sid:``, ``:email:``), its ``:created_at:``, and its ``:history:``: the student's earlier
submissions, which the export does not hold (listed in the summary). A submission's folder is
named by each submitter's ``:sid:`` (their email when the course gives no student id), so a
group submission gives one folder per member.
"""

from __future__ import annotations

import yaml

from grader.commands.lms_import.folders import Submission
from grader.commands.lms_import.safe_archive import ArchiveError, Contents, Entry

METADATA = "submission_metadata.yml"
MAX_METADATA_BYTES = 4 << 20  # some 500 bytes a submission: thousands of students


class _Loader(yaml.SafeLoader):
    """Safe YAML that reads Ruby's tags (``!ruby/object:BigDecimal``, ...) as plain values."""


def _untagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


_Loader.add_multi_constructor("!", _untagged)


def _key(mapping: object, name: str) -> object:
    """A field by its Ruby symbol (``:sid``) or plain name (``sid``)."""
    if not isinstance(mapping, dict):
        return None
    return mapping.get(f":{name}", mapping.get(name))


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()


def read(contents: Contents, label: str) -> tuple[list[Submission], list[str]]:
    found = sorted((e for e in contents.entries if e.parts[-1] == METADATA), key=lambda e: len(e.parts))
    if not found:
        raise ArchiveError(f"{label}: no {METADATA} (is this Gradescope's Export Submissions zip?)")
    meta, root = found[0], found[0].parts[:-1]
    if len(meta.data) > MAX_METADATA_BYTES:
        raise ArchiveError(f"{label}: {meta.name} is larger than {MAX_METADATA_BYTES} bytes")
    try:
        data = yaml.load(meta.data.decode("utf-8", errors="replace"), Loader=_Loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1})" if where is not None else ""
        raise ArchiveError(f"{label}: {meta.name} is not readable YAML{at}") from None
    if not isinstance(data, dict):
        raise ArchiveError(f"{label}: {meta.name} is not a mapping of submission folders")
    folders: dict[str, list[Entry]] = {}
    skipped: list[str] = []
    for entry in contents.entries:
        if entry is meta:
            continue
        if entry.parts[: len(root)] != root or len(entry.parts) < len(root) + 2:
            skipped.append(f"{entry.name}: not inside a submission folder beside {meta.name}")
            continue
        key = entry.parts[len(root)]
        folders.setdefault(key, []).append(Entry(entry.parts[len(root) + 1 :], entry.data))
    subs: list[Submission] = []
    for key, record in data.items():
        key = str(key)
        submitters = _key(record, "submitters")
        if not isinstance(submitters, list) or not submitters:
            skipped.append(f"{key}: no submitters in {meta.name}")
            continue
        if key not in folders:
            skipped.append(f"{key}: in {meta.name} but no files in the export")
            continue
        history = _key(record, "history")
        notes = []
        if isinstance(history, list) and history:
            ids = ", ".join(_text(_key(h, "id")) or "?" for h in history[:10])
            notes.append(f"{len(history)} earlier submission(s) not in the export (ids {ids})")
        people = [(_text(_key(s, "sid")) or _text(_key(s, "email")), _text(_key(s, "name"))) for s in submitters]
        for ident, name in people:
            if not ident:
                skipped.append(f"{key}: a submitter ({name or 'no name'}) with neither :sid: nor :email:")
                continue
            group = [n or i for i, n in people if i != ident]
            extra = [f"group submission {key} with {', '.join(group)}"] if group else []
            subs.append(Submission(ident, name, tuple(folders[key]), notes=tuple(notes + extra)))
    for key in sorted(set(folders) - {str(k) for k in data}):
        skipped.append(f"{key}/: not in {meta.name} (whose submission is it?)")
    return subs, skipped
