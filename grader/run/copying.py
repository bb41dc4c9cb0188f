"""Copy a submission into its scratch directory, and remove scratch directories, within bounds.

A submission directory is the student's: it may hold 100,000 empty folders, folders
nested 1,500 deep, links, devices or gigabytes. Copying it, giving the copy to the
sandbox uid and removing it again happen in the grader, outside every process limit,
so each of them must be bounded: in entries of every kind (files, folders, links,
anything else), in depth and in bytes, in time (the submission's own budget), and
walked with an explicit stack (never recursion, which ends in RecursionError).

Only what a submission can use is copied: regular files, outside hidden folders
(``.git``) and ``__pycache__``, which are not even looked into. Links, devices,
sockets and pipes are counted and never copied.
"""

from __future__ import annotations

import math
import os
import shutil
import stat
import time
from pathlib import Path

from grader.lab import active as active_lab


def module_file_name() -> str:
    """The file a submission must hold: the lab's student module (``lab.yaml: student.module``)."""
    return active_lab().module_file


def handout_module_file() -> str | None:
    """Where the lab's handout keeps that file inside a repository, if anywhere."""
    return active_lab().handout_path


MAX_SUBMISSION_FILES = 200  # regular files copied
MAX_SUBMISSION_BYTES = 16 << 20  # their total size
MAX_SUBMISSION_ENTRIES = 1000  # every entry looked at: files, folders, links, anything else
MAX_SUBMISSION_DEPTH = 8  # folders inside folders
LIFT_DEPTH = 16  # remove_tree moves deeper folders up, so that no path it uses grows long


class SubmissionProblem(Exception):
    """The submission cannot be run at all (e.g. no module file, too many files)."""


def is_graphgrade_output(folder: str) -> bool:
    """A folder ``graphgrade grade --out`` wrote (every run writes both files). Students grade
    with ``--out`` inside their own folder; its reports change on every run, so taken as part of
    the submission they would defeat the observation cache and count against its bounds."""
    return os.path.isfile(os.path.join(folder, "summary.html")) and os.path.isfile(os.path.join(folder, "grades.csv"))


def walk_submission(submission: Path, deadline: float = math.inf) -> tuple[list[str], list[str]]:
    """The folders and regular files of a submission directory that a worker gets, as paths
    relative to it (parents before children): no hidden entries, no ``__pycache__``, no links,
    nothing but folders and regular files. Iterative and bounded in entries of every kind,
    depth, files and bytes: raises :class:`SubmissionProblem`, with a message for the student,
    over any bound or past ``deadline`` (``time.monotonic()``). Everything that reads a
    submission's tree (the copy, the observation cache's content hash, the similarity check)
    walks it here, so none of them can be made to recurse or to read without limit."""
    name = submission.name
    folders: list[str] = []
    regular: list[str] = []
    entries = files = total = 0
    stack: list[tuple[str, int]] = [("", 0)]  # (folder relative to the submission, its depth)
    while stack:
        rel, depth = stack.pop()
        with os.scandir(submission / rel if rel else submission) as listing:
            for entry in listing:
                entries += 1
                if entries > MAX_SUBMISSION_ENTRIES:
                    raise SubmissionProblem(
                        f"{name}/ has more than {MAX_SUBMISSION_ENTRIES} entries (files, folders and links); "
                        f"a submission is {module_file_name()} and a few modules, so it was not graded"
                    )
                if time.monotonic() > deadline:
                    raise SubmissionProblem(
                        f"copying {name}/ for grading took longer than the submission's time budget"
                    )
                if entry.name.startswith(".") or entry.name == "__pycache__":
                    continue
                child = os.path.join(rel, entry.name)
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    if is_graphgrade_output(entry.path):
                        continue  # `graphgrade grade . --out report`: earlier reports are not the submission
                    if depth + 1 > MAX_SUBMISSION_DEPTH:
                        raise SubmissionProblem(
                            f"{name}/ has folders nested more than {MAX_SUBMISSION_DEPTH} deep, so it was not graded"
                        )
                    folders.append(child)
                    stack.append((child, depth + 1))
                elif stat.S_ISREG(mode):
                    files += 1
                    total += entry.stat(follow_symlinks=False).st_size
                    if files > MAX_SUBMISSION_FILES or total > MAX_SUBMISSION_BYTES:
                        raise SubmissionProblem(
                            f"{name}/ has more than {MAX_SUBMISSION_FILES} files or {MAX_SUBMISSION_BYTES} bytes"
                        )
                    regular.append(child)
    return folders, regular


def module_file(regular: list[str], name: str) -> str:
    """Which of a submission's regular files (paths relative to it, as :func:`walk_submission`
    lists them) is its module file (the lab's, :func:`module_file_name`): the one at its top; else
    the one file of that name deeper down (a handout may keep it in a package folder; a course
    repository may keep it anywhere). Raises :class:`SubmissionProblem`, naming every candidate, when there
    is none or more than one. The copy, the worker and the similarity pass all ask here."""
    wanted = module_file_name()
    if wanted in regular:
        return wanted
    found = sorted(rel for rel in regular if os.path.basename(rel) == wanted)
    if len(found) == 1:
        return found[0]
    if not found:
        raise SubmissionProblem(
            f"no {wanted} in {name}/: the submission must hold a file named {wanted} "
            f"(at its top, or in one folder{_such_as()})"
        )
    raise SubmissionProblem(
        f"{name}/ holds {len(found)} files named {wanted} and none at its top: "
        f"{', '.join(found[:3])}{' ...' if len(found) > 3 else ''}; keep one (or put the one to grade at the top)"
    )


def _such_as() -> str:
    handout = handout_module_file()
    folder = os.path.dirname(handout) if handout else ""
    return f" such as {folder}/" if folder else ""


def copy_submission(submission: Path, dest: Path, deadline: float = math.inf) -> list[Path]:
    """Copy the submission's regular files into ``dest`` (an empty folder); returns every path
    made beneath ``dest``. Raises :class:`SubmissionProblem`, with a message for the student,
    over any bound or past ``deadline`` (``time.monotonic()``)."""
    if submission.is_file():
        if submission.stat().st_size > MAX_SUBMISSION_BYTES:
            raise SubmissionProblem(f"{submission.name} is larger than {MAX_SUBMISSION_BYTES} bytes")
        # The path given on the command line is followed (the instructor named it); links inside
        # a submission directory never are.
        shutil.copyfile(submission.resolve(), dest / module_file_name(), follow_symlinks=False)
        return [dest / module_file_name()]
    if not submission.is_dir():
        raise SubmissionProblem(f"{submission}: no such file or directory")
    folders, regular = walk_submission(submission, deadline)
    module_file(regular, submission.name)
    made: list[Path] = []
    for rel in folders:
        (dest / rel).mkdir()
        made.append(dest / rel)
    for rel in regular:
        if time.monotonic() > deadline:
            raise SubmissionProblem(
                f"copying {submission.name}/ for grading took longer than the submission's time budget"
            )
        shutil.copyfile(submission / rel, dest / rel, follow_symlinks=False)
        made.append(dest / rel)
    return made


def remove_tree(root: Path) -> None:
    """``shutil.rmtree(root, ignore_errors=True)`` without recursion and without long paths,
    whatever a worker left there (folders nested thousands deep, folders it made unreadable):
    each folder is listed once; one found deeper than LIFT_DEPTH is first moved up to ``root``."""
    root_s = str(root)
    lifted = 0
    stack: list[tuple[str, int, bool]] = [(root_s, 0, False)]  # (folder, depth, its entries are gone)
    while stack:
        path, depth, emptied = stack.pop()
        if emptied:
            try:
                os.rmdir(path)
            except OSError:
                pass
            continue
        try:
            listing = _list(path)
        except NotADirectoryError:
            _unlink(path)
            continue
        except OSError:
            continue
        stack.append((path, depth, True))
        for entry_path, is_dir in listing:
            if not is_dir:
                _unlink(entry_path)
                continue
            child_depth = depth + 1
            if child_depth > LIFT_DEPTH and path != root_s:
                lifted += 1
                moved = os.path.join(root_s, f".graphgrade-lifted-{os.getpid()}-{lifted}")
                try:
                    os.rename(entry_path, moved)
                except OSError:
                    continue
                entry_path, child_depth = moved, 1
            stack.append((entry_path, child_depth, False))


def _list(path: str) -> list[tuple[str, bool]]:
    try:
        with os.scandir(path) as listing:
            return [(e.path, e.is_dir(follow_symlinks=False)) for e in listing]
    except PermissionError:  # a folder its owner made unreadable: make it ours again, once
        os.chmod(path, 0o700)
        with os.scandir(path) as listing:
            return [(e.path, e.is_dir(follow_symlinks=False)) for e in listing]


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
