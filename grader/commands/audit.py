"""``graphgrade audit``: does the spec suite catch the mistakes students make?

A suite is only as good as the mistakes it catches. The audit grades a set of
deliberately broken implementations of the lab (``reference/mutants/``, one
realistic mistake each, written as plain-text edits of the reference's source,
see ``reference/mutants/_base.py``) and a few baselines that must score low
(``reference/mutants/baselines/``), through exactly the isolated path that
grades students (zygote, sandboxed workers, judge, scoring), against every
spec of every visibility. The reference itself is graded alongside as the
control.

A case *kills* a mutant when it passes for the reference and does not pass
for the mutant. The audit fails (exit 1) when

- a mutant survives (no case kills it): the suite has a gap;
- a mutant cannot be imported (it is broken, not mistaken; for instance an
  edit whose text is no longer in the reference);
- a baseline scores more than its ``MAX_PERCENT``: the suite is too lenient;
- the reference does not pass a case (run ``graphgrade validate``).

Specs that kill no mutant are reported, not failed: they may still pin down
a rule no mutant breaks yet.

The grader process never imports a mutant: descriptions (the module
docstring) and thresholds (``MAX_PERCENT``) are read from the source with
:mod:`ast`.

This module is the engine; the command is ``run`` in :mod:`grader.commands.audit_command`, the
output :mod:`reports.audit_text` (terminal) and :mod:`reports.audit_html` (the page).
"""

from __future__ import annotations

import ast
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from grader.judging.audit_results import AuditResult, BaselineResult, MutantResult, SpecInfo  # below the renderers
from grader.lab import active as active_lab

ROOT = Path(__file__).resolve().parent.parent.parent  # the install's root: holds the grader package
BASELINES = "baselines"  # the folder of the lab's mutants that holds its baselines


def mutants_dir() -> Path:
    """The active lab's mutants (``lab.yaml: mutants``)."""
    lab = active_lab()
    if lab.paths.mutants is None:
        raise AuditSetupError(f"{lab.root / 'lab.yaml'}: mutants: not given, so there is nothing to audit with")
    return lab.paths.mutants


# ------------------------------------------------------------------ what is audited
@dataclass(frozen=True)
class Subject:
    """One file the audit grades."""

    name: str
    path: Path
    description: str
    max_percent: float | None = None  # baselines only


class AuditSetupError(Exception):
    """The mutants or baselines cannot be read (a broken checkout, not a verdict)."""


def _module_facts(path: Path) -> tuple[str, float | None]:
    """A module's one-line docstring and its ``MAX_PERCENT`` constant, read without importing it."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise AuditSetupError(f"{path}: cannot read ({exc})") from None
    doc = (ast.get_docstring(tree) or "").strip()
    if not doc:
        raise AuditSetupError(f"{path}: a mutant or baseline needs a one-line docstring describing the mistake")
    limit = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "MAX_PERCENT" for t in node.targets
        ):
            try:
                limit = float(ast.literal_eval(node.value))
            except (ValueError, TypeError):
                raise AuditSetupError(f"{path}: MAX_PERCENT must be a number") from None
    return " ".join(doc.split()), limit


def _subjects(directory: Path, baselines: bool) -> list[Subject]:
    found = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        description, limit = _module_facts(path)
        if baselines and limit is None:
            raise AuditSetupError(f"{path}: a baseline needs MAX_PERCENT, the most it may score")
        found.append(Subject(path.stem, path, description, limit if baselines else None))
    return found


def discover_mutants(directory: Path | None = None) -> list[Subject]:
    return _subjects(directory or mutants_dir(), baselines=False)


def discover_baselines(directory: Path | None = None) -> list[Subject]:
    folder = directory or mutants_dir() / BASELINES
    return _subjects(folder, baselines=True) if folder.is_dir() else []


# ------------------------------------------------------------------ running it
def audit_settings():
    """The students' settings, plus the one trusted import root mutants need (the lab's
    ``mutants_import_root``: where ``import reference.mutants._base`` is found, say)."""
    from grader.run.runner import RunSettings

    root = active_lab().paths.mutants_import_root
    return RunSettings(import_paths=(str(root),) if root is not None else ())


def evaluate(
    specs, control_report, mutant_reports, baseline_reports, mutants, baselines, duration_s=0.0, specs_dir=""
) -> AuditResult:
    """Turn graded reports into the audit's verdicts (pure; the grading happened elsewhere)."""
    infos = tuple(SpecInfo(s.id, s.title, s.tag, s.visibility, tuple(f"{s.id}/{c.id}" for c in s.cases)) for s in specs)
    reference_passes = {f"{c.spec}/{c.case}" for c in control_report.cases if c.status == "passed"}
    control_failures = tuple(f"{c.spec}/{c.case}" for c in control_report.cases if c.status != "passed")
    results = []
    for subject, report in zip(mutants, mutant_reports):
        killed = tuple(
            uid for c in report.cases if c.status != "passed" and (uid := f"{c.spec}/{c.case}") in reference_passes
        )
        results.append(MutantResult(subject.name, subject.description, killed, report.problem))
    base = tuple(
        BaselineResult(
            subject.name,
            subject.description,
            report.score,
            report.max_score,
            report.percent,
            float(subject.max_percent or 0.0),
            tuple(f"{c.spec}/{c.case}" for c in report.cases if c.status == "passed"),
        )
        for subject, report in zip(baselines, baseline_reports)
    )
    return AuditResult(infos, tuple(results), base, control_failures, duration_s, specs_dir)


def answer_tags() -> tuple[str, ...]:
    """The lab's behaviours of its ``answers`` part (the notebook answers): mutants of the code
    are not audited against them."""
    return tuple(b.id for b in active_lab().behaviours if b.part == "answers")


def run_audit(specs_dir: Path, jobs: int = 2, load=None) -> AuditResult:
    """Grade the control, every mutant and every baseline against every spec in ``specs_dir``.

    ``load(specs_dir)`` returns a :class:`grader.suite.loader.LoadedSuite`; it is called only
    once the zygote runs, exactly as when grading students.
    """
    from grader.commands.grade import grade_submissions
    from grader.run.runner import Zygote
    from grader.suite.loader import load_suite

    mutants = discover_mutants()
    baselines = discover_baselines()
    if not mutants:
        raise AuditSetupError(f"{mutants_dir()}: no mutants to audit with")
    control = active_lab().paths.reference
    subjects = [Subject("reference", control, "the reference (control)"), *mutants, *baselines]
    started = time.monotonic()
    with Zygote() as zygote:  # started before any spec is read, as for students
        loaded = (load or load_suite)(specs_dir)
        # The notebook answers judge a student's cited lines, which no mutant of the code changes
        # (tests/test_answers.py holds them): the audit is about the rules of the code.
        specs = tuple(s for s in loaded.suite.specs if s.tag not in answer_tags())
        if not specs:
            raise AuditSetupError(f"{specs_dir}: no specs to audit")
        with tempfile.TemporaryDirectory(prefix="graphgrade-audit-") as out:
            settings = audit_settings()
            graded = grade_submissions(
                zygote, loaded, specs, [s.path for s in subjects], Path(out) / "first", settings, jobs=jobs
            )
            reports = [g.report for g in graded]
            # A crash or timeout is a verdict for a student, but for the audit it may also be a fluke of a
            # loaded machine; one more run settles it (the second run's result stands, whatever it is).
            again = [i for i, r in enumerate(reports) if unsettled(r)]
            if again:
                regraded = grade_submissions(
                    zygote, loaded, specs, [subjects[i].path for i in again], Path(out) / "again", settings, jobs=jobs
                )
                for i, g in zip(again, regraded):
                    reports[i] = g.report
    n = len(mutants)
    result = evaluate(
        specs,
        reports[0],
        reports[1 : 1 + n],
        reports[1 + n :],
        mutants,
        baselines,
        time.monotonic() - started,
        str(specs_dir),
    )
    return replace(result, regraded=tuple(subjects[i].name for i in again))


def unsettled(report) -> bool:
    """A crash, a timeout or an import problem: maybe a fluke of a loaded machine, so graded again."""
    return bool(report.problem) or any(c.status in ("crashed", "timeout") for c in report.cases)
