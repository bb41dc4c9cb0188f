"""The instructor's page of a spec audit: which cases catch which mutant.

Rendered from a :class:`grader.judging.audit_results.AuditResult` with the same Jinja
environment as the other reports (autoescape forced on, ``StrictUndefined``,
every value cleaned on output). The page is self-contained: CSS inline, no
scripts, no external URLs. The matrix has a row per mutant and a column per
spec; a cell's colour says how many of the spec's cases kill the mutant, and
its tooltip lists them.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.judging.audit_results import AuditResult

from . import view as v
from .html import environment


@dataclass(frozen=True)
class Column:
    number: int
    id: str
    title: str
    tag: str
    visibility: str
    n_cases: int
    n_mutants: int  # mutants this spec kills


@dataclass(frozen=True)
class Cell:
    kills: int
    n_cases: int
    level: int  # 0 none, 1 one case, 2 a few, 3 most of the spec
    tip: str


@dataclass(frozen=True)
class Row:
    name: str
    description: str
    status: str  # killed | survived | broken
    total: int
    cells: tuple[Cell, ...]
    problem: str
    killed_by: tuple[str, ...]


def _level(kills: int, n_cases: int) -> int:
    if kills == 0:
        return 0
    if kills == 1:
        return 1
    return 3 if n_cases and kills * 2 >= n_cases else 2


def _rows(result: AuditResult) -> tuple[Row, ...]:
    rows = []
    for m in result.mutants:
        cells = []
        for s in result.specs:
            kills = m.kills_in(s.id)
            tip = f"{m.name} × {s.id}: " + (
                ", ".join(c.split("/", 1)[1] for c in kills) if kills else "no case kills it"
            )
            cells.append(Cell(len(kills), len(s.cases), _level(len(kills), len(s.cases)), tip))
        status = "broken" if m.problem else ("killed" if m.killed_by else "survived")
        rows.append(Row(m.name, m.description, status, len(m.killed_by), tuple(cells), m.problem, m.killed_by))
    return tuple(rows)


def render_audit(result: AuditResult) -> str:
    """The audit page as one HTML document."""
    if not isinstance(result, AuditResult):
        raise TypeError(f"expected a grader.judging.audit_results.AuditResult, got {type(result).__name__}")
    live = [m for m in result.mutants if not m.problem]
    columns = tuple(
        Column(i + 1, s.id, s.title, s.tag, s.visibility, len(s.cases), sum(1 for m in live if m.kills_in(s.id)))
        for i, s in enumerate(result.specs)
    )
    return (
        environment()
        .get_template("audit.html.j2")
        .render(
            result=result,
            ok=result.ok,
            columns=columns,
            rows=_rows(result),
            n_cases=sum(len(s.cases) for s in result.specs),
            n_killed=sum(1 for m in result.mutants if m.killed),
            survivors=result.survivors,
            broken=result.broken,
            baselines=result.baselines,
            specs_killing_nothing=result.specs_killing_nothing,
            cases_killing_nothing=result.cases_killing_nothing,
            control_failures=result.control_failures,
            duration=v.fmt_seconds(result.duration_s),
        )
    )
