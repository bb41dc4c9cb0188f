"""``graphgrade import {canvas,moodle,gradescope,github-classroom} EXPORT --into FOLDER``.

An LMS's bulk download turned into one folder per student who submitted, named by the
identifier the download itself carries (Canvas: the user id; Moodle: the participant id;
Gradescope: the submitter's student id; GitHub Classroom: the username), each holding the
submission as the grader expects it (the lab's module file at its top, or in the handout's
package folder), ready for
``graphgrade grade FOLDER/*`` and then ``graphgrade export``, which matches on the same
identifier by default. No roster is needed.

The download is hostile input (:mod:`.safe_archive`); folders are written by :mod:`.folders`;
each platform's naming is read by its own module. The summary (standard output) says what was
found, what was kept, what was skipped and why; each refused entry is one line on standard
error. Exit status: 0 done, 1 something was refused (the rest was still written), 2 the download
could not be read at all.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.commands.cli_common import Subcommand
from grader.commands.lms_import import canvas, folders, github_classroom, gradescope, moodle
from grader.commands.lms_import.safe_archive import ArchiveError, Budget, Refusal, read_download
from grader.errors import UsageError
from grader.run.copying import module_file_name

PLATFORMS = {
    "canvas": ("Canvas's Download Submissions zip", "the user id (the gradebook's ID column)"),
    "moodle": ("Moodle's Download all submissions zip", "the participant id (the grading worksheet's Identifier)"),
    "gradescope": ("Gradescope's Export Submissions zip", "the submitter's student id (:sid:, else :email:)"),
    "github-classroom": ("a folder (or zip) of GitHub Classroom clones", "the GitHub username"),
}


def read_submissions(
    args: argparse.Namespace, budget: Budget
) -> tuple[list[folders.Submission], list[str], list[Refusal], int]:
    contents = read_download(args.export, budget)
    label = args.export.name
    if args.platform == "canvas":
        subs, skipped = canvas.read(contents)
    elif args.platform == "moodle":
        subs, skipped = moodle.read(contents)
    elif args.platform == "gradescope":
        subs, skipped = gradescope.read(contents, label)
    else:
        subs, skipped = github_classroom.read(contents, label, args.assignment)
    return subs, skipped, list(contents.refused), len(contents.litter)


def run(args: argparse.Namespace) -> int:
    budget = Budget()
    try:
        subs, skipped, refused, litter = read_submissions(args, budget)
        ready = [folders.reroot(folders.unpack_zips(s, budget, refused)) for s in subs]
        written = folders.write_all(args.into, ready, refused)
    except ArchiveError as exc:
        raise UsageError(str(exc)) from None
    for r in refused:
        print(f"graphgrade: refused {r.line()}", file=sys.stderr)
    print_summary(args, len(subs), written, skipped, refused, litter)
    return 1 if refused else 0


def print_summary(
    args, found: int, written: list[folders.Written], skipped: list[str], refused: list[Refusal], litter: int
) -> None:
    what, ident = PLATFORMS[args.platform]
    out = sys.stdout
    print(f"{args.export}: {what}; each folder is named by {ident}", file=out)
    for w in written:
        sub = w.submission
        flags = " [late]" if sub.late else ""
        entry = (
            ""
            if w.has_entry
            else f"  (no {module_file_name()} at its top, and not exactly one deeper: it will score 0)"
        )
        name = f" {sub.name}" if sub.name and sub.name != sub.ident else ""
        print(f"  kept {w.folder.name}{name}{flags}: {len(w.kept)} file(s){entry}", file=out)
        for note in w.notes:
            print(f"      {note}", file=out)
    for line in skipped:
        print(f"  skipped {line}", file=out)
    late = sum(1 for w in written if w.submission.late)
    print(
        f"{found} submission(s) found, {len(written)} folder(s) written to {args.into}"
        + (f" ({late} late)" if late else "")
        + f"; {len(skipped)} skipped; {len(refused)} refused"
        + (f"; {litter} OS or tool file(s) dropped (__MACOSX, .DS_Store, .git, ...)" if litter else ""),
        file=out,
    )
    if written:
        print(
            f"next: graphgrade grade {args.into}/* --out OUT, then graphgrade export {_lms(args.platform)} OUT ...",
            file=out,
        )


def _lms(platform: str) -> str:
    return platform if platform in ("canvas", "moodle") else "canvas|moodle"


def add_arguments(p: argparse.ArgumentParser) -> None:
    platforms = p.add_subparsers(dest="platform", metavar="PLATFORM", required=True, help=", ".join(PLATFORMS))
    for name, (what, ident) in PLATFORMS.items():
        q = platforms.add_parser(name, help=f"read {what}", description=f"Read {what}; folders are named by {ident}.")
        q.add_argument("export", type=Path, metavar="EXPORT", help=f"{what} (or the folder it unpacks to)")
        q.add_argument("--into", type=Path, required=True, metavar="FOLDER", help="a new or empty folder to write to")
        if name == "github-classroom":
            q.add_argument(
                "--assignment",
                default=None,
                metavar="NAME",
                help="the assignment's name, the repositories' prefix (default: from the folder's name or the repositories')",
            )
        q.set_defaults(platform=name)


COMMAND = Subcommand(
    "import",
    help="turn an LMS's bulk download into one submission folder per student",
    description=(
        "Read a bulk download (Canvas, Moodle, Gradescope, GitHub Classroom) and write one folder per student "
        "who submitted, named by the identifier the download carries, with the lab's module file at its top. "
        "The download is treated as hostile: links, devices, names that climb out and bombs are refused, one line each."
    ),
    add_arguments=add_arguments,
    run=run,
)
