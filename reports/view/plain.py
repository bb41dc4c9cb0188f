"""One case as plain text (Gradescope, JUnit, PrairieLearn)."""

from __future__ import annotations

from .cases import CaseView, observed_text
from .formats import step_no
from .text import clean_text, one_line


def case_text(view: CaseView, hint: str = "") -> str:
    """The feedback of one case as plain text; a redacted case gives its message only. ``hint``:
    its spec's hint, shown unless the spec has a hint of its own for this case's cause."""
    if view.redacted:
        return view.message
    parts: list[str] = []
    if view.passed:
        return view.message or "Passed."
    if view.description:
        parts.append(view.description)
    if view.message:
        parts.append(view.message)
    if view.partial_credit:
        parts.append(f"Scored check by check: {view.partial_credit}.")
    if view.steps:
        lines = ["Steps:"]
        for s in view.steps:
            lines.append(f"  {step_no(s.index)}. {one_line(s.action)}  ->  {one_line(s.outcome)}")
        parts.append("\n".join(lines))
    if view.checks:
        lines = ["Checks:"]
        for c in view.checks:
            where = f"step {step_no(c.step)}: " if c.step is not None else ""
            mark = "ok  " if c.passed else "FAIL"
            lines.append(f"  [{mark}] {where}{one_line(c.what)}")
            if not c.passed:
                lines.append(f"         expected: {clean_text(c.expected)}")
                lines.append(f"         observed: {clean_text(observed_text(c))}")
        parts.append("\n".join(lines))
    if view.launches:
        cells = []
        for p in view.launches:
            e = "-" if p.expected is None else str(p.expected)
            o = "-" if p.observed is None else str(p.observed)
            cells.append(f"{one_line(p.label) or 'step ' + step_no(p.step)} {e}/{o}")
        parts.append("Launches per step (expected/observed): " + ", ".join(cells))
    if view.hint or hint:
        parts.append("Hint: " + clean_text(view.hint or hint))
    if view.output_tail.strip():
        parts.append("Output (last lines):\n" + view.output_tail.rstrip())
    return "\n\n".join(parts)
