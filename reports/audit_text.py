"""The audits as text for a terminal: ``graphgrade audit`` (:func:`format_text`, the kill matrix
of the named mutants) and ``graphgrade audit --deep`` (:func:`format_deep_text`, the mutation score).

Pure: an :class:`grader.judging.audit_results.AuditResult` or :class:`grader.judging.audit_results.DeepResult` in, text out
(the HTML page of the named-mutant audit is :mod:`reports.audit_html`).
"""

from __future__ import annotations

import textwrap

from grader.judging.audit_results import AuditResult, DeepResult


# ------------------------------------------------------------------ graphgrade audit
def _group_by_spec(case_ids: tuple[str, ...]) -> list[str]:
    groups: dict[str, list[str]] = {}
    for uid in case_ids:
        spec, case = uid.split("/", 1)
        groups.setdefault(spec, []).append(case)
    return [f"{spec}: {', '.join(cases)}" for spec, cases in groups.items()]


def _wrap(text: str, indent: str, width: int = 100) -> str:
    return textwrap.fill(
        text, width=width, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False
    )


def format_text(result: AuditResult) -> str:
    lines: list[str] = []
    n_cases = sum(len(s.cases) for s in result.specs)
    lines.append(
        f"graphgrade audit: {len(result.mutants)} mutants and {len(result.baselines)} baselines against "
        f"{n_cases} cases in {len(result.specs)} specs ({result.specs_dir})"
    )
    lines.append("")
    lines.append("Kill matrix: cases of each spec that fail for the mutant and pass for the reference ('.' = none)")
    name_w = max([len(m.name) for m in result.mutants] + [6]) + 2
    numbers = [f"{i + 1:>3}" for i in range(len(result.specs))]
    lines.append(" " * name_w + "".join(numbers) + "  total")
    for m in result.mutants:
        cells = []
        for s in result.specs:
            k = len(m.kills_in(s.id))
            cells.append(f"{k:>3}" if k else "  .")
        verdict = "BROKEN" if m.problem else ("SURVIVED" if not m.killed_by else "")
        lines.append(f"{m.name:<{name_w}}" + "".join(cells) + f"  {len(m.killed_by):>5}  {verdict}".rstrip())
    killing = [sum(1 for m in result.mutants if m.kills_in(s.id) and not m.problem) for s in result.specs]
    lines.append(f"{'mutants killed':<{name_w}}" + "".join(f"{k:>3}" for k in killing))
    lines.append("")
    lines.append("Specs:")
    for i, s in enumerate(result.specs):
        lines.append(f"  {i + 1:>2}  {s.id}  [{s.tag}, {s.visibility}, {len(s.cases)} cases]")
    lines.append("")
    lines.append("Mutants:")
    for m in result.mutants:
        if m.problem:
            status = "BROKEN  "
        elif not m.killed_by:
            status = "SURVIVED"
        else:
            status = "killed  "
        lines.append(f"  {status} {m.name}: {m.description}")
        if m.problem:
            lines.append(_wrap(f"cannot be graded: {m.problem}", " " * 13))
        elif m.killed_by:
            lines.append(
                _wrap(
                    f"by {len(m.killed_by)} case{'s' if len(m.killed_by) != 1 else ''}: "
                    + "; ".join(_group_by_spec(m.killed_by)),
                    " " * 13,
                )
            )
        else:
            lines.append(" " * 13 + "no case catches this mistake: add one that does (see specs/README.md)")
    lines.append("")
    lines.append("Baselines (must score low):")
    for b in result.baselines:
        flag = "ok      " if b.ok else "TOO HIGH"
        lines.append(
            f"  {flag} {b.name}: {b.percent:.1f}% ({b.score:g}/{b.max_score:g}; at most {b.max_percent:g}%) - {b.description}"
        )
        if not b.ok:
            lines.append(_wrap("passes: " + "; ".join(_group_by_spec(b.passed)), " " * 13))
    lines.append("")
    if result.control_failures:
        lines.append(
            _wrap(
                "The reference fails: "
                + ", ".join(result.control_failures)
                + " (these cases are wrong; run graphgrade validate)",
                "",
            )
        )
        lines.append("")
    nothing = result.specs_killing_nothing
    if nothing:
        lines.append("Specs that kill no mutant (a rule no mutant breaks yet, or a spec that checks too little):")
        for sid in nothing:
            lines.append(f"  - {sid}")
    else:
        lines.append("Every spec kills at least one mutant.")
    idle = result.cases_killing_nothing
    if idle:
        lines.append(_wrap(f"{len(idle)} of {n_cases} cases kill no mutant: " + ", ".join(idle), ""))
    else:
        lines.append("Every case kills at least one mutant.")
    if result.regraded:
        lines.append(
            _wrap(
                "Graded twice after a crash, timeout or import problem in the first run: " + ", ".join(result.regraded),
                "",
            )
        )
    lines.append("")
    killed = sum(1 for m in result.mutants if m.killed)
    parts = [f"{killed} of {len(result.mutants)} mutants killed"]
    if result.survivors:
        parts.append(f"{len(result.survivors)} survived ({', '.join(m.name for m in result.survivors)})")
    if result.broken:
        parts.append(f"{len(result.broken)} broken ({', '.join(m.name for m in result.broken)})")
    high = result.baselines_too_high
    parts.append(f"{len(result.baselines) - len(high)} of {len(result.baselines)} baselines within their limits")
    if high:
        parts.append(f"too high: {', '.join(b.name for b in high)}")
    if result.control_failures:
        parts.append(f"the reference fails {len(result.control_failures)} cases")
    lines.append(f"{'OK' if result.ok else 'FAILED'}: " + "; ".join(parts) + f" ({result.duration_s:.1f} s)")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ graphgrade audit --deep
def _section(lines: list[str], heading: str, rows: list[str]) -> None:
    """A heading, its rows indented, and a blank line; nothing at all when there are no rows."""
    if rows:
        lines.append(heading)
        lines.extend(f"  {row}" for row in rows)
        lines.append("")


def _killed_rows(mutants) -> list[str]:
    return [f"{m.file}:{m.line}  [{m.scope}]  {m.change}  (by {', '.join(m.killed_by[:3])})" for m in mutants]


def format_deep_text(result: DeepResult) -> str:
    lines = [f"graphgrade audit --deep: {len(result.mutants)} mutants of {result.target}", ""]
    _section(
        lines,
        "Survivors (no case kills them; add a case, or list them in reference/mutants/equivalent.yaml, under equivalent or outside_contract, with a reason):",
        [f"{m.file}:{m.line}  [{m.scope}]  {m.change}" for m in result.survived],
    )
    _section(
        lines,
        "Listed as equivalent, but killed (remove these entries):",
        _killed_rows(result.not_equivalent),
    )
    _section(
        lines,
        "Outside the contract (they change only what docs/contract.md leaves open; left out of the score):",
        [f"{m.file}:{m.line}  [{m.scope}]  {m.change}  ({m.outside})" for m in result.outside_contract],
    )
    _section(
        lines,
        "Listed as outside the contract, but killed (a case grades what the contract leaves open):",
        _killed_rows(result.outside_but_killed),
    )
    _section(
        lines,
        "Listed as equivalent, but no such mutant is made any more (remove these entries):",
        [f"{e.file}  [{e.scope}]  {e.line!r}: {e.change}" for e in result.stale],
    )
    if result.control_failures:
        lines.append("The reference fails: " + ", ".join(result.control_failures) + " (run graphgrade validate)")
        lines.append("")
    idle = [uid for uid, n in result.kills_per_case().items() if n == 0]
    if idle:
        lines.append(f"{len(idle)} cases kill none of these mutants: " + ", ".join(idle))
        lines.append("")
    n, e = len(result.mutants), len(result.equivalent)
    o = len(result.outside_contract) + len(result.outside_but_killed)
    lines.append(
        f"{'OK' if result.ok else 'FAILED'}: mutation score {result.score:.1f}% "
        f"({len(result.killed)} killed of {n - e - o}; {n} mutants, {e} equivalent, {o} outside the contract, "
        f"{len(result.survived)} survived) ({result.duration_s:.1f} s)"
    )
    return "\n".join(lines) + "\n"
