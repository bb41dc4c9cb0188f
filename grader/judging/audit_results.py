"""The audit's typed results: what ``graphgrade audit`` (:mod:`grader.commands.audit`) and
``audit --deep`` (:mod:`grader.commands.deep_audit`) find, and what :mod:`reports.audit_text` and
:mod:`reports.audit_html` render. Below the renderers, as the grading results
(:mod:`grader.judging.results`) are: a renderer never imports an entry point."""

from __future__ import annotations

from dataclasses import dataclass, field


# ------------------------------------------------------------------ graphgrade audit
@dataclass(frozen=True)
class SpecInfo:
    id: str
    title: str
    tag: str
    visibility: str
    cases: tuple[str, ...]  # "spec/case"


@dataclass(frozen=True)
class MutantResult:
    name: str
    description: str
    killed_by: tuple[str, ...]  # "spec/case", in suite order
    problem: str = ""  # the mutant could not be imported: an audit bug, not a kill

    @property
    def killed(self) -> bool:
        return bool(self.killed_by) and not self.problem

    def kills_in(self, spec_id: str) -> tuple[str, ...]:
        return tuple(c for c in self.killed_by if c.split("/", 1)[0] == spec_id)


@dataclass(frozen=True)
class BaselineResult:
    name: str
    description: str
    score: float
    max_score: float
    percent: float
    max_percent: float
    passed: tuple[str, ...]  # the cases it passes: where the points came from

    @property
    def ok(self) -> bool:
        return self.percent <= self.max_percent + 1e-9


@dataclass(frozen=True)
class AuditResult:
    specs: tuple[SpecInfo, ...]
    mutants: tuple[MutantResult, ...]
    baselines: tuple[BaselineResult, ...]
    control_failures: tuple[str, ...]  # cases the reference itself does not pass
    duration_s: float = 0.0
    specs_dir: str = ""
    regraded: tuple[str, ...] = ()  # graded a second time after a crash, timeout or import problem

    @property
    def survivors(self) -> tuple[MutantResult, ...]:
        return tuple(m for m in self.mutants if not m.killed_by and not m.problem)

    @property
    def broken(self) -> tuple[MutantResult, ...]:
        return tuple(m for m in self.mutants if m.problem)

    @property
    def baselines_too_high(self) -> tuple[BaselineResult, ...]:
        return tuple(b for b in self.baselines if not b.ok)

    @property
    def specs_killing_nothing(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.specs if not any(m.kills_in(s.id) for m in self.mutants if not m.problem))

    @property
    def cases_killing_nothing(self) -> tuple[str, ...]:
        killing = {c for m in self.mutants if not m.problem for c in m.killed_by}
        return tuple(c for s in self.specs for c in s.cases if c not in killing)

    @property
    def ok(self) -> bool:
        return not (self.survivors or self.broken or self.baselines_too_high or self.control_failures)

    def to_json(self) -> dict:
        return {
            "mutants": [
                {
                    "name": m.name,
                    "description": m.description,
                    "killed_by": list(m.killed_by),
                    **({"problem": m.problem} if m.problem else {}),
                }
                for m in self.mutants
            ],
            "baselines": [
                {
                    "name": b.name,
                    "description": b.description,
                    "score": round(b.score, 6),
                    "max_score": round(b.max_score, 6),
                    "percent": round(b.percent, 3),
                    "max_percent": b.max_percent,
                    "ok": b.ok,
                    "passed": list(b.passed),
                }
                for b in self.baselines
            ],
            "specs_killing_nothing": list(self.specs_killing_nothing),
            "cases_killing_nothing": list(self.cases_killing_nothing),
            "survivors": [m.name for m in self.survivors],
            "reference_failures": list(self.control_failures),
            "specs": [
                {"id": s.id, "title": s.title, "tag": s.tag, "visibility": s.visibility, "cases": list(s.cases)}
                for s in self.specs
            ],
            "regraded": list(self.regraded),
            "duration_s": round(self.duration_s, 2),
            "ok": self.ok,
        }


# ------------------------------------------------------------------ graphgrade audit --deep
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
    target: str = "the reference"  # the file mutated, as the output names it (reference/MODULE.py)

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
