"""Renderers of graded results: HTML, Gradescope, JUnit and CSV.

The modules below are pure (typed :class:`grader.judging.results.Report` in, text or
dicts out); this module does the file I/O:

- :func:`write_submission_outputs` writes a submission's files and :func:`write_batch_outputs`
  a class's, each as :mod:`reports.outputs` (the registry of every output) lists them;
- :func:`write_grades_csv` writes ``grades.csv`` alone, and :func:`write_file` is how
  every page is written (the audit's page and the similarity report use it too).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from grader.judging.results import Report

from .csv_export import grades_csv
from .gradescope import to_gradescope
from .html import render_submission, render_summary
from .junit import to_junit_xml
from .outputs import GRADE, Batch, batch_texts, submission_texts

__all__ = [
    "render_submission",
    "render_summary",
    "to_gradescope",
    "to_junit_xml",
    "write_batch_outputs",
    "write_file",
    "write_grades_csv",
    "write_submission_outputs",
]


def write_file(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8 through a temporary file, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_submission_outputs(
    report: Report, out_dir: Path, hidden_visibility: str = "hidden", staff: bool = True, command: str = GRADE
) -> None:
    """Write the files ``command`` writes for one submission into ``out_dir`` (see
    :mod:`reports.outputs`): ``report.json``, ``report.html`` (the student's page), ``staff.html``
    (every case in full; left out with ``staff=False``, a student's own run), ``results.json``
    (Gradescope; ``hidden_visibility`` is the test visibility of hidden cases), ``junit.xml``."""
    out_dir = Path(out_dir)
    for name, text in submission_texts(report, hidden_visibility, staff, command).items():
        write_file(out_dir / name, text)


def report_link(report_dir, out_dir, page: str = "report.html") -> str:
    """The relative URL, from ``out_dir``, of ``report_dir/page``."""
    rel = os.path.relpath(Path(report_dir).resolve() / page, Path(out_dir).resolve())
    return "/".join(quote(part) for part in Path(rel).as_posix().split("/"))


def write_batch_outputs(
    reports: Sequence[Report],
    report_dirs: Sequence,
    out_dir: Path,
    paths: Sequence[str] | None = None,
    similar_pairs=None,
    staff: bool = True,
    command: str = GRADE,
) -> None:
    """Write the files ``command`` writes for a class into ``out_dir`` (see :mod:`reports.outputs`):
    ``summary.html`` (links relative to ``out_dir``) and ``grades.csv``; with ``staff`` (not a
    student kit's run) also ``answers.csv``, the notebook answers, when there are any.

    ``report_dirs[i]`` is the folder holding ``reports[i]``'s ``report.html`` and ``staff.html``;
    ``paths[i]`` the path it was graded from (a column of both files).
    """
    reports = list(reports)
    report_dirs = list(report_dirs)
    if len(reports) != len(report_dirs):
        raise ValueError(f"{len(reports)} reports but {len(report_dirs)} report folders")
    out_dir = Path(out_dir)
    links = [report_link(d, out_dir) for d in report_dirs]
    paths = list(paths) if paths is not None else [r.path for r in reports]  # merge and similarity: from report.json
    staff_links = [
        report_link(d, out_dir, "staff.html") if (Path(d) / "staff.html").is_file() else "" for d in report_dirs
    ]
    batch = Batch(tuple(reports), tuple(links), tuple(paths), tuple(staff_links), similar_pairs)
    for name, text in batch_texts(batch, staff, command).items():
        write_file(out_dir / name, text)


def write_grades_csv(reports: Sequence[Report], path, paths: Sequence[str] | None = None) -> None:
    """Write ``grades.csv``: ``submission``, ``path``, one column per spec id (points earned), ``total``, ``max``.

    Columns follow the spec order of the first report, then specs only later
    reports have; a submission without a spec leaves that cell empty.
    """
    Path(path).write_text(grades_csv(reports, paths), encoding="utf-8", newline="")
