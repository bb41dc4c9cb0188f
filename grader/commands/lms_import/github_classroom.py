"""GitHub Classroom: one repository per student, named ``<assignment>-<username>``.

``gh classroom clone student-repos`` clones them into ``<assignment>-submissions/``; a zip of
that folder is read the same way. The username is the repository's name without the
assignment's prefix: ``--assignment`` when given, else the folder's name without
``-submissions``, else the longest prefix ending in ``-`` that every repository shares (two
repositories at least). ``.git`` is dropped (litter, with the rest of the history: the clone's
checked-out files are the submission).
"""

from __future__ import annotations

import os

from grader.commands.lms_import.folders import Submission
from grader.commands.lms_import.safe_archive import ArchiveError, Contents, Entry

SUFFIX = "-submissions"


def prefix_of(label: str, repos: list[str], assignment: str | None) -> str:
    if assignment:
        return assignment if assignment.endswith("-") else assignment + "-"
    stem = label.removesuffix(".zip")
    if stem.endswith(SUFFIX) and all(r.startswith(stem.removesuffix(SUFFIX) + "-") for r in repos):
        return stem.removesuffix(SUFFIX) + "-"
    if len(repos) >= 2:
        common = os.path.commonprefix(repos)
        if "-" in common:
            return common[: common.rindex("-") + 1]
    raise ArchiveError(
        f"{label}: cannot tell the assignment's prefix from the repositories' names; give --assignment NAME "
        "(GitHub Classroom names each repository NAME-username)"
    )


def read(contents: Contents, label: str, assignment: str | None) -> tuple[list[Submission], list[str]]:
    repos: dict[str, list[Entry]] = {}
    skipped: list[str] = []
    for entry in contents.entries:
        if len(entry.parts) < 2:
            skipped.append(f"{entry.name}: a file beside the repositories, not in one")
            continue
        repos.setdefault(entry.parts[0], []).append(entry)
    if len(repos) == 1 and not assignment:  # a zip of the -submissions folder: one level down
        (only,) = repos
        if only.endswith(SUFFIX):
            label, inner = only, [e for e in contents.entries if e.parts[0] == only]
            return read(Contents(tuple(Entry(e.parts[1:], e.data) for e in inner), (), ()), label, assignment)
    if not repos:
        return [], skipped
    prefix = prefix_of(label, sorted(repos), assignment)
    subs: list[Submission] = []
    for repo in sorted(repos):
        if not repo.startswith(prefix) or len(repo) == len(prefix):
            skipped.append(f"{repo}/: not named {prefix}username")
            continue
        user = repo[len(prefix) :]
        files = tuple(Entry(e.parts[1:], e.data) for e in repos[repo])
        subs.append(Submission(user, user, files))
    return subs, skipped
