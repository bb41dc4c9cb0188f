"""Canvas's "Download Submissions": one flat zip, every file of every student's latest attempt.

Each entry is named ``sortablename[_LATE]_userid_attachmentid_originalfilename``: the student's
sortable name lowercased with everything but letters, digits and ``_`` removed (``doejane``),
``_LATE`` when Canvas marked the submission late, the user's Canvas id (the gradebook
export's ``ID`` column, which ``graphgrade export canvas`` matches on by default), the
attachment's id (a later upload has a larger one), and the file's name as uploaded, where
Canvas appends ``-1``, ``-2``... before the extension when the student's files already held that
name (``module-1.py``: a re-upload). A text entry or a URL submission is written as
``sortablename_userid_text.html`` / ``..._link.html`` (no attachment id): listed, not kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grader.commands.lms_import.folders import Submission
from grader.commands.lms_import.safe_archive import Contents, Entry

ENTRY = re.compile(r"^(?P<sortable>\w*?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<attachment>\d+)_(?P<file>.+)$", re.S)
OTHER = re.compile(r"^(?P<sortable>\w*?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<what>text|link|media)\.html?$")
REUPLOAD = re.compile(r"^(?P<stem>.+?)-(?P<n>\d+)(?P<ext>\.[^.]*)?$")


@dataclass(frozen=True)
class Upload:
    user: str
    sortable: str
    late: bool
    attachment: int
    file: str  # as uploaded, Canvas's -N suffix undone
    entry: Entry


def original_name(file: str) -> str:
    """``module-1.py`` -> ``module.py``: Canvas's rename of a re-upload undone (a name that
    truly ends in -N, never importable as a module, loses it too)."""
    m = REUPLOAD.match(file)
    if m is None:
        return file
    return m["stem"] + (m["ext"] or "")


def read(contents: Contents) -> tuple[list[Submission], list[str]]:
    """The submissions of a Canvas download, and one line per entry that is not one."""
    uploads: dict[str, list[Upload]] = {}
    skipped: list[str] = []
    for entry in contents.entries:
        if len(entry.parts) != 1:
            skipped.append(f"{entry.name}: in a folder; Canvas's download is flat (not a Canvas download?)")
            continue
        m = ENTRY.match(entry.parts[0])
        if m is None:
            other = OTHER.match(entry.parts[0])
            why = (
                f"a {other['what']} entry, not an uploaded file"
                if other
                else "not named sortablename_userid_attachmentid_file as Canvas names an upload"
            )
            skipped.append(f"{entry.name}: {why}")
            continue
        uploads.setdefault(m["user"], []).append(
            Upload(m["user"], m["sortable"], bool(m["late"]), int(m["attachment"]), m["file"], entry)
        )
    subs = [_submission(user, items) for user, items in sorted(uploads.items(), key=lambda kv: int(kv[0]))]
    return subs, skipped


def _submission(user: str, items: list[Upload]) -> Submission:
    """One student's uploads: for each file name, the latest attachment; the others listed."""
    latest: dict[str, Upload] = {}
    notes: list[str] = []
    for upload in sorted(items, key=lambda u: u.attachment):
        name = original_name(upload.file)
        if name != upload.file:
            notes.append(f"{upload.file} is Canvas's name for a re-upload of {name}")
        if name in latest:
            older = latest[name]
            notes.append(f"earlier upload of {name} not kept (attachment {older.attachment}, {older.file})")
        latest[name] = upload
    files = tuple(Entry((name,), u.entry.data) for name, u in sorted(latest.items()))
    return Submission(
        ident=user,
        name=items[0].sortable,
        files=files,
        late=any(u.late for u in items),
        notes=tuple(notes),
    )
