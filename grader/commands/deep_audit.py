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
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from grader.commands.audit import ROOT, AuditSetupError, unsettled

TARGET = ROOT / "reference" / "cudagraph.py"
TARGET_NAME = "reference/cudagraph.py"
EQUIVALENTS = ROOT / "reference" / "mutants" / "equivalent.yaml"
ENTRY_KEYS = ("file", "scope", "line", "change", "reason")


@dataclass(frozen=True)
class Equivalent:
    file: str
    scope: str
    line: str  # the text of the line, stripped
    change: str
    reason: str
    outside: bool = False  # listed under outside_contract: what it changes, the contract leaves open

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.file, self.scope, self.line, self.change)


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


@dataclass(frozen=True)
class DeepMutant:
    file: str
    line: int
    scope: str
    line_text: str
    change: str
    killed_by: tuple[str, ...]
    equivalent: str = ""  # the reason, when listed as equivalent
    outside: str = ""  # the reason, when listed as outside the contract

    def brief(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "change": self.change,
            "scope": self.scope,
            "line_text": self.line_text,
        }


@dataclass(frozen=True)
class DeepResult:
    mutants: tuple[DeepMutant, ...]
    control_failures: tuple[str, ...]
    stale: tuple[Equivalent, ...] = ()  # listed as equivalent but matching no mutant
    duration_s: float = 0.0
    regraded: int = 0
    cases: tuple[str, ...] = field(default_factory=tuple)

    @property
    def killed(self) -> tuple[DeepMutant, ...]:
        return tuple(m for m in self.mutants if m.killed_by and not m.outside)

    @property
    def equivalent(self) -> tuple[DeepMutant, ...]:
        return tuple(m for m in self.mutants if m.equivalent and not m.killed_by)

    @property
    def outside_contract(self) -> tuple[DeepMutant, ...]:
        """Listed as outside the contract, and rightly: no case kills it."""
        return tuple(m for m in self.mutants if m.outside and not m.killed_by)

    @property
    def not_equivalent(self) -> tuple[DeepMutant, ...]:
        """Listed as equivalent, yet a case kills it: the entry is wrong."""
        return tuple(m for m in self.mutants if m.equivalent and m.killed_by)

    @property
    def outside_but_killed(self) -> tuple[DeepMutant, ...]:
        """Listed as outside the contract, yet a case kills it: that case grades what the contract
        leaves open (or the entry is wrong)."""
        return tuple(m for m in self.mutants if m.outside and m.killed_by)

    @property
    def survived(self) -> tuple[DeepMutant, ...]:
        return tuple(m for m in self.mutants if not m.killed_by and not m.equivalent and not m.outside)

    @property
    def score(self) -> float:
        live = len(self.mutants) - len(self.equivalent) - len(self.outside_contract) - len(self.outside_but_killed)
        return 100.0 * len(self.killed) / live if live else 100.0

    @property
    def ok(self) -> bool:
        return not (self.survived or self.control_failures or self.outside_but_killed)

    def kills_per_case(self) -> dict[str, int]:
        counts = dict.fromkeys(self.cases, 0)
        for m in self.mutants:
            for uid in m.killed_by:
                counts[uid] = counts.get(uid, 0) + 1
        return counts

    def to_json(self) -> dict:
        return {
            "deep": {
                "mutants": len(self.mutants),
                "killed": len(self.killed),
                "equivalent": len(self.equivalent),
                "outside_contract": [{**m.brief(), "reason": m.outside} for m in self.outside_contract],
                "outside_contract_but_killed": [
                    {**m.brief(), "killed_by": list(m.killed_by)} for m in self.outside_but_killed
                ],
                "survived": [m.brief() for m in self.survived],
                "score": round(self.score, 2),
                "listed_equivalent_but_killed": [
                    {**m.brief(), "killed_by": list(m.killed_by)} for m in self.not_equivalent
                ],
                "stale_equivalents": [
                    {"file": e.file, "scope": e.scope, "line": e.line, "change": e.change} for e in self.stale
                ],
                "reference_failures": list(self.control_failures),
                "duration_s": round(self.duration_s, 1),
                "ok": self.ok,
            }
        }


def run_deep_audit(
    specs_dir: Path,
    jobs: int = 2,
    load=None,
    only: Callable[[str], bool] | None = None,
    equivalents: Path = EQUIVALENTS,
    target: Path = TARGET,
    target_name: str = TARGET_NAME,
) -> DeepResult:
    """Mutate ``target``, grade every mutant and the unmutated control against ``specs_dir``.

    ``only(scope)`` restricts the mutants to some functions (``"GraphRunner._load"``)."""
    from grader.commands.audit import audit_settings
    from grader.commands.grade import grade_submissions
    from grader.commands.mutation import generate_mutants
    from grader.run.runner import Zygote
    from grader.spec.loader import load_suite

    listed = load_equivalents(equivalents)
    mutants = generate_mutants(target, target_name, only)
    if not mutants:
        raise AuditSetupError(f"{target}: no mutants to grade")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="graphgrade-deep-") as tmp, Zygote() as zygote:
        loaded = (load or load_suite)(specs_dir)
        specs = loaded.suite.specs
        if not specs:
            raise AuditSetupError(f"{specs_dir}: no specs to audit")
        paths = []
        for i, mutant in enumerate([None, *mutants]):
            folder = Path(tmp) / "src" / f"m{i:04d}"
            folder.mkdir(parents=True)
            (folder / "cudagraph.py").write_text(
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
    return DeepResult(tuple(results), failures, stale, time.monotonic() - started, len(again), cases)
