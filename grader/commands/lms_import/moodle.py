"""Moodle's "Download all submissions" (mod/assign): one zip, a folder per participant and plugin.

Moodle (mod/assign/locallib.php, ``download_submissions``) names each file
``<prefix>_<plugin subtype>_<plugin type>_`` + the file's path, where ``<prefix>`` is
``clean_filename(fullname with _ turned into spaces + "_" + uniqueid)``: the participant id
(``get_uniqueid_for_user``), which the grading worksheet shows as ``Participant <id>`` in its
``Identifier`` column (``graphgrade export moodle`` matches on it by default). With "Download
submissions in folders" (the default since Moodle 3.1) that name is a folder:
``Jane Doe_1234567_assignsubmission_file_/module.py``; without it, the file name follows
directly: ``Jane Doe_1234567_assignsubmission_file_module.py``. Online text
(``assignsubmission_onlinetext``) is listed, not kept. Moodle's download holds the latest
attempt only and does not say whether it was late.
"""

from __future__ import annotations

import re

from grader.commands.lms_import.folders import Submission
from grader.commands.lms_import.safe_archive import Contents, Entry

PREFIX = re.compile(r"^(?P<name>.*)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_(?P<rest>.*)$", re.S)


def read(contents: Contents) -> tuple[list[Submission], list[str]]:
    files: dict[str, list[Entry]] = {}
    names: dict[str, str] = {}
    skipped: list[str] = []
    other: dict[str, set[str]] = {}
    for entry in contents.entries:
        m = PREFIX.match(entry.parts[0])
        if m is None:
            skipped.append(
                f"{entry.name}: not named 'Full Name_participantid_assignsubmission_...' as Moodle names a submission"
            )
            continue
        pid = m["participant"]
        names.setdefault(pid, m["name"])
        if m["plugin"] != "file":
            other.setdefault(pid, set()).add(m["plugin"])
            continue
        parts = ((m["rest"],) if m["rest"] else ()) + entry.parts[1:]
        if not parts:
            skipped.append(f"{entry.name}: no file name after the participant's prefix")
            continue
        files.setdefault(pid, []).append(Entry(parts, entry.data))
    subs = []
    for pid in sorted(set(files) | set(other), key=int):
        if pid not in files:
            skipped.append(f"participant {pid} ({names[pid]}): only {', '.join(sorted(other[pid]))} (no file uploaded)")
            continue
        notes = tuple(f"{plugin} submission not kept (not a file)" for plugin in sorted(other.get(pid, ())))
        subs.append(Submission(pid, names[pid], tuple(files[pid]), notes=notes))
    return subs, skipped
