"""YAML syntax errors in words an instructor understands, at the line to fix.

PyYAML reports what its parser expected ("expected <block end>, but found
'<block mapping start>'"); an instructor needs what is wrong with the file
(an indentation, a missing colon, a tab, a quote or bracket never closed) and
the line where to look, which is not always the line PyYAML points at (an
unclosed quote is noticed at the end of the file, a missing colon a line later).
"""

from __future__ import annotations

import yaml


def _line_text(lines: list[str], index: int) -> str:
    return lines[index].rstrip() if 0 <= index < len(lines) else ""


def _previous_content_line(lines: list[str], index: int) -> int:
    """The index of the nearest non-blank, non-comment line before ``index`` (or -1)."""
    i = index - 1
    while i >= 0 and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
        i -= 1
    return i


def explain(exc: yaml.MarkedYAMLError, text: str) -> tuple[int, str]:
    """``(line, message)`` for a YAML syntax error: 1-based line, a sentence or two."""
    lines = text.splitlines()
    problem = (exc.problem or "").strip()
    context = (exc.context or "").strip()
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else 1
    column = mark.column + 1 if mark else 1
    opened = exc.context_mark.line + 1 if exc.context_mark else line

    tab_line = next(
        (i + 1 for i, t in enumerate(lines) if "\t" in t[: len(t) - len(t.lstrip())] or ("\t" in t and i + 1 == line)),
        None,
    )
    if "'\\t'" in problem or (tab_line is not None and tab_line in (line, line - 1)):
        where = tab_line or line
        return where, "a tab character: YAML indents with spaces only. Replace the tab with spaces."
    if "quoted scalar" in context:
        quote = (
            '"'
            if exc.context_mark
            and _line_text(lines, exc.context_mark.line)[exc.context_mark.column : exc.context_mark.column + 1] == '"'
            else "'"
        )
        return (
            opened,
            f"a {quote} quote opened here is never closed. Close it on the same line (or escape a quote inside the text).",
        )
    if "flow sequence" in context or "flow mapping" in context:
        bracket, closing = ("[", "]") if "sequence" in context else ("{", "}")
        return (
            opened,
            f"a '{bracket}' opened here is not closed where expected: check for a missing '{closing}' or a missing comma between items.",
        )
    if "simple key" in context and "':'" in problem:
        return (
            opened,
            f"a key without its colon: '{_line_text(lines, opened - 1).strip()}' needs a ':' after the key (write 'key: value').",
        )
    if "mapping values are not allowed" in problem:
        prev = _previous_content_line(lines, line - 1)
        prev_text = _line_text(lines, prev).strip()
        if (
            prev >= 0
            and ":" not in prev_text
            and not prev_text.startswith("- ")
            and not prev_text.endswith(("[", "{", ","))
        ):
            return prev + 1, f"a missing colon: '{prev_text}' needs a ':' after its key (write 'key: value')."
        if prev >= 0 and prev_text.startswith("- ") and ":" not in prev_text:
            return prev + 1, f"a missing colon: '{prev_text}' needs a ':' after its key (write '- key: value')."
        here = _line_text(lines, line - 1)
        indent = len(here) - len(here.lstrip())
        prev_indent = len(_line_text(lines, prev)) - len(_line_text(lines, prev).lstrip()) if prev >= 0 else 0
        if prev >= 0 and indent > prev_indent and here.lstrip().count(":") == 1 and not prev_text.endswith(":"):
            return (
                line,
                f"this line is indented more than the line above it (column {indent + 1}, not {prev_indent + 1}): keys of one mapping must start in the same column.",
            )
        return line, "a second ':' on this line: a value holding ': ' must be put in quotes."
    if (
        "block end" in problem
        or "expected key" in problem
        or "block mapping" in context
        or "block collection" in context
    ):
        return line, (
            f"the indentation here (column {column}) does not match the lines around it: keys of one mapping "
            "must start in the same column, and a list item's '-' must line up with its siblings."
        )
    if "could not find expected ':'" in problem:
        return opened, "a key without its colon (write 'key: value')."
    if "found character" in problem and "cannot start any token" in problem:
        return line, f"{problem.replace('found character', 'the character')}: put the value in quotes."
    return line, f"YAML syntax error: {problem or context}"
