"""``graphgrade audit --deep``: the mutation score of the suite, on mutants nobody hand-picked.

The named mutants measure the mistakes the suite's author imagined. The deep
audit measures the suite: it makes every single-change mutant of the
reference's source (:mod:`grader.commands.mutation`), grades each one through exactly
the isolated path that grades students (one zygote for all of them, the specs
loaded once, sandboxed workers, judge, scoring), and counts the mutants that
some case kills (a case the reference passes and the mutant does not).

Some mutants cannot be killed by any correct test: they change nothing the
contract lets anyone observe (a ``__repr__``, the value string of an enum
member, a copy that is never written to). Those are listed, each with a
one-line reason, in ``reference/mutants/equivalent.yaml``. The score is

    killed / (mutants - equivalent)

and the deep audit fails (exit 1) while a mutant that is not listed survives.
A listed mutant that some case does kill is reported too: it was not
equivalent, so its entry should go.

A mutant that only changes what the contract leaves open on purpose (a choice
that is the student's, a combination no case grades) is not a gap to close
with a new check in some other behaviour's cases: it is listed apart, under
``outside_contract`` in the same file, with the reason (the open point of
docs/contract.md), and left out of the score like an equivalent one. Such a
mutant that some case kills fails the deep audit: that case grades something
the contract leaves open.

    mutation score = killed / (mutants - equivalent - outside the contract)
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from grader.commands.audit import ROOT, AuditSetupError, answer_tags, unsettled
from grader.judging.audit_results import (  # typed results, below the renderers
    DeepMutant,
    DeepResult,
    Equivalent,
)
from grader.lab import active as active_lab


def target_file() -> Path:
    """What the deep audit mutates: the active lab's reference solution."""
    return active_lab().paths.reference


def target_name() -> str:
    """The reference as the deep audit's output names it: its folder and file name."""
    reference = target_file()
    return f"{reference.parent.name}/{reference.name}"


EQUIVALENTS = ROOT / "reference" / "mutants" / "equivalent.yaml"
ENTRY_KEYS = ("file", "scope", "line", "change", "reason")


LISTS = {"equivalent": False, "outside_contract": True}  # the file's lists: is it outside the contract


def load_equivalents(path: Path = EQUIVALENTS) -> tuple[Equivalent, ...]:
    """The committed lists of equivalent mutants and of mutants outside the contract; a malformed
    file is a setup error naming the entry."""
    if not path.exists():
        return ()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise AuditSetupError(f"{path}: cannot read ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("equivalent", []), list):
        raise AuditSetupError(f"{path}: expected a mapping with a list 'equivalent'")
    found = []
    for name, outside in LISTS.items():
        entries = data.get(name, [])
        if not isinstance(entries, list):
            raise AuditSetupError(f"{path}: {name}: expected a list")
        for i, entry in enumerate(entries):
            if (
                not isinstance(entry, dict)
                or set(entry) != set(ENTRY_KEYS)
                or not all(isinstance(entry[k], str) and entry[k].strip() for k in ENTRY_KEYS)
            ):
                raise AuditSetupError(f"{path}: {name}[{i}]: needs exactly the text keys {', '.join(ENTRY_KEYS)}")
            found.append(Equivalent(*(entry[k] for k in ENTRY_KEYS), outside=outside))
    return tuple(found)


def run_deep_audit(
    specs_dir: Path,
    jobs: int = 2,
    load=None,
    only: Callable[[str], bool] | None = None,
    equivalents: Path = EQUIVALENTS,
    target: Path | None = None,
    name: str | None = None,
) -> DeepResult:
    """Mutate ``target``, grade every mutant and the unmutated control against ``specs_dir``.

    ``target``: the file mutated (default: the lab's reference, named ``name`` in the output).
    ``only(scope)`` restricts the mutants to some functions (``"Class.method"``)."""
    from grader.commands.audit import audit_settings
    from grader.commands.grade import grade_submissions
    from grader.commands.mutation import generate_mutants
    from grader.run.runner import Zygote
    from grader.suite.loader import load_suite

    listed = load_equivalents(equivalents)
    target = target or target_file()
    mutants = generate_mutants(target, name or target_name(), only)
    if not mutants:
        raise AuditSetupError(f"{target}: no mutants to grade")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="graphgrade-deep-") as tmp, Zygote() as zygote:
        loaded = (load or load_suite)(specs_dir)
        specs = tuple(s for s in loaded.suite.specs if s.tag not in answer_tags())  # the code's rules only
        if not specs:
            raise AuditSetupError(f"{specs_dir}: no specs to audit")
        paths = []
        for i, mutant in enumerate([None, *mutants]):
            folder = Path(tmp) / "src" / f"m{i:04d}"
            folder.mkdir(parents=True)
            (folder / active_lab().module_file).write_text(
                target.read_text(encoding="utf-8") if mutant is None else mutant.source, encoding="utf-8"
            )
            paths.append(folder)
        settings = audit_settings()
        graded = grade_submissions(zygote, loaded, specs, paths, Path(tmp) / "out", settings, jobs=jobs)
        reports = [g.report for g in graded]
        again = [i for i, r in enumerate(reports) if unsettled(r) and i > 0]
        if again:
            for i, g in zip(
                again,
                grade_submissions(
                    zygote, loaded, specs, [paths[i] for i in again], Path(tmp) / "again", settings, jobs=jobs
                ),
            ):
                reports[i] = g.report
    control = reports[0]
    passes = {f"{c.spec}/{c.case}" for c in control.cases if c.status == "passed"}
    failures = tuple(f"{c.spec}/{c.case}" for c in control.cases if c.status != "passed")
    reasons = {e.key: e.reason for e in listed if not e.outside}
    outside = {e.key: e.reason for e in listed if e.outside}
    results = []
    for mutant, report in zip(mutants, reports[1:]):
        killed = tuple(uid for c in report.cases if c.status != "passed" and (uid := f"{c.spec}/{c.case}") in passes)
        results.append(
            DeepMutant(
                mutant.file,
                mutant.line,
                mutant.scope,
                mutant.line_text,
                mutant.change,
                killed,
                reasons.get(mutant.key, ""),
                outside.get(mutant.key, ""),
            )
        )
    keys = {m.key for m in mutants}
    stale = tuple(e for e in listed if e.key not in keys and (only is None or only(e.scope)))
    cases = tuple(f"{s.id}/{c.id}" for s in specs for c in s.cases)
    return DeepResult(
        tuple(results), failures, stale, time.monotonic() - started, len(again), cases, name or target_name()
    )
