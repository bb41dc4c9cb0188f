"""Every file graphgrade renders from reports, in one registry (issue 32, point 5).

Each :class:`Output` says its file name, who may read it (``student``: also written by a
student's own run of the kit; ``staff``: only by the staff's runs), whether it is written once
per submission (into ``OUT/<name>/``) or once per batch (into ``OUT/``), how its text is made,
and which commands write it. ``grade`` and ``merge`` write the submission and batch outputs
through :func:`submission_texts` and :func:`batch_texts` (merge copies the submission files a
shard wrote, which these same functions rendered); ``prairielearn`` writes its own
``results.json`` through :func:`submission_texts` too. A new format is one row here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from grader.judging.report_writing import report_json_text
from grader.judging.results import Report

from .csv_export import answers_csv, grades_csv
from .gradescope import to_gradescope
from .html import render_submission, render_summary
from .junit import to_junit_xml

Audience = Literal["student", "staff"]
Scope = Literal["submission", "batch"]
GRADE, MERGE, PRAIRIELEARN = "grade", "merge", "prairielearn"
COMMANDS = (GRADE, MERGE, PRAIRIELEARN)


@dataclass(frozen=True)
class Batch:
    """What a batch output is rendered from: the class's reports, each one's link (relative to
    the batch folder) to its student page and to its staff page ("" when it has none), the path
    each was graded from, and the pairs the similarity check listed (None when it did not run)."""

    reports: tuple[Report, ...]
    links: tuple[str, ...]
    paths: tuple[str, ...]
    staff_links: tuple[str, ...]
    similar_pairs: object = None


@dataclass(frozen=True)
class Output:
    id: str  # unique: the file name, or "<command>:<file name>" where two outputs share a name
    file: str
    # student: written by a student's own run too (then of the public specs only); staff: never
    # written there, nor shown to students (staff.html, answers.csv)
    audience: Audience
    scope: Scope  # submission: into OUT/<name>/ (prairielearn: ROOT/results/); batch: into OUT/
    # submission: (report, hidden_visibility) -> text; batch: Batch -> text, or None (not written)
    render: Callable
    commands: tuple[str, ...]
    what: str


def _gradescope(report: Report, hidden_visibility: str) -> str:
    return json.dumps(to_gradescope(report, hidden_visibility), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _prairielearn(report: Report, hidden_visibility: str) -> str:
    from .prairielearn import dumps, to_prairielearn

    return dumps(to_prairielearn(report))


def _answers(batch: Batch) -> str | None:
    return answers_csv(batch.reports) if any(r.answers for r in batch.reports) else None


OUTPUTS: tuple[Output, ...] = (
    Output(
        "report.json",
        "report.json",
        "student",
        "submission",
        lambda report, _: report_json_text(report),
        (GRADE, MERGE),
        "the grader's record, every case (a student's run: the public specs only)",
    ),
    Output(
        "report.html",
        "report.html",
        "student",
        "submission",
        lambda report, _: render_submission(report),
        (GRADE, MERGE),
        "the student's page: hidden cases as passed / not passed only",
    ),
    Output(
        "staff.html",
        "staff.html",
        "staff",
        "submission",
        lambda report, _: render_submission(report, staff=True),
        (GRADE, MERGE),
        "the staff's page: every case in full",
    ),
    Output(
        "results.json", "results.json", "student", "submission", _gradescope, (GRADE, MERGE), "Gradescope's results"
    ),
    Output(
        "junit.xml", "junit.xml", "student", "submission", lambda r, _: to_junit_xml(r), (GRADE, MERGE), "JUnit XML"
    ),
    Output(
        "prairielearn:results.json",
        "results.json",
        "student",
        "submission",
        _prairielearn,
        (PRAIRIELEARN,),
        "PrairieLearn's results, in the job's results/ folder",
    ),
    Output(
        "summary.html",
        "summary.html",
        "student",
        "batch",
        lambda b: render_summary(list(b.reports), list(b.links), list(b.paths), list(b.staff_links), b.similar_pairs),
        (GRADE, MERGE),
        "the class's page: scores, specs, causes, links to every page",
    ),
    Output(
        "grades.csv",
        "grades.csv",
        "student",
        "batch",
        lambda b: grades_csv(list(b.reports), list(b.paths)),
        (GRADE, MERGE),
        "one row per submission, one column per spec",
    ),
    Output("answers.csv", "answers.csv", "staff", "batch", _answers, (GRADE, MERGE), "the class's notebook answers"),
)


def outputs(command: str, scope: Scope, staff: bool = True) -> tuple[Output, ...]:
    """The outputs ``command`` writes at ``scope``, in the registry's order; without ``staff``
    (a student's own run) the student's only."""
    if command not in COMMANDS:
        raise ValueError(f"unknown command {command!r}: one of {', '.join(COMMANDS)}")
    return tuple(
        o for o in OUTPUTS if command in o.commands and o.scope == scope and (staff or o.audience == "student")
    )


def submission_files(command: str = GRADE, staff: bool = True) -> tuple[str, ...]:
    """The names of the files ``command`` writes for one submission."""
    return tuple(o.file for o in outputs(command, "submission", staff))


def submission_texts(
    report: Report, hidden_visibility: str = "hidden", staff: bool = True, command: str = GRADE
) -> dict[str, str]:
    """Each file ``command`` writes for ``report``: its name and text."""
    return {o.file: o.render(report, hidden_visibility) for o in outputs(command, "submission", staff)}


def batch_texts(batch: Batch, staff: bool = True, command: str = GRADE) -> dict[str, str]:
    """Each file ``command`` writes for a batch: its name and text (an output with nothing to say left out)."""
    texts = {}
    for o in outputs(command, "batch", staff):
        text = o.render(batch)
        if text is not None:
            texts[o.file] = text
    return texts
