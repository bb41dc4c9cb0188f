"""The student's notebook answers (issue 33): answers.md or a notebook, read by the grader as data.

The handout's definition of done ends with questions answered by citing lines of the
student's own code. The student writes one slot line per question::

    constraint-1: MODULE.py:131
    constraint-2: package/MODULE.py:186
    win: 178
    two-graphs: two capturable runs surround the one eager op

in ``answers.md``, or in the markdown or raw cells of ``answers.ipynb`` (or of the one
``.ipynb`` the submission holds, read with nbformat). A citation is ``[FILE:]LINE``, a range
``42-43`` or several lines ``42, 57``; a bare number means the student's module (the lab's
``MODULE.py``), and ``MODULE.py`` means that file wherever the submission keeps it. The slots
are the lab's (lab.yaml: ``answers``; the CUDA-graph lab's are above).

Nothing here is imported or run: the files are read as bounded text, the notebook as JSON.
A problem with a slot (missing, no line number, a line past the end of its file, a file that
is not the student's) is that slot's one-line message and costs only that slot; a problem
with the whole file (none, two notebooks, too large) is every slot's message.
"""

from __future__ import annotations

import ast
import functools
import io
import os
import re
import tokenize
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.lab import active as active_lab
from grader.run.copying import SubmissionProblem, module_file, walk_submission
from grader.safetext import safe_text
from grader.spec.answer_slots import ANSWERS_FILE, NOTEBOOK_FILE, Cited, free_slots, where_to_write
from grader.spec.answer_slots import slots as slot_names

MAX_ANSWERS_BYTES = 1 << 20  # an answers file or notebook larger than this is not read
MAX_SOURCE_BYTES = 1 << 20  # a cited source file larger than this is not read
MAX_FREE_TEXT = 2000  # characters of the free-text answer kept
MAX_CITED_LINES = 8  # lines one slot may cite


@functools.cache
def _slot_line(names: tuple[str, ...]) -> re.Pattern:
    """A slot line of the lab's slots ``names``: ``name: value``, markdown around the name allowed."""
    return re.compile(r"^[\s>*_`#-]*(" + "|".join(map(re.escape, names)) + r")[*_`]*\s*:\s*(.*)$", re.IGNORECASE)


_CITE = re.compile(r"^(?:(?P<file>[^\s:,]+\.py)\s*:\s*)?(?P<first>\d{1,7})(?:\s*[-–]\s*(?P<last>\d{1,7}))?$")


@dataclass(frozen=True)
class SlotAnswer:
    slot: str
    text: str  # what the student wrote after the slot's colon (bounded, safe to show)
    cited: tuple[Cited, ...] = ()
    problem: str = ""  # why the slot cannot be judged; "" when it can


@dataclass(frozen=True)
class SourceFile:
    """A cited file's lines, and which of them can never be right (comment, docstring, def...)."""

    lines: tuple[str, ...]
    kinds: dict[int, str]  # line -> "blank" | "comment" | "docstring" | "def line" | "class line"


@dataclass(frozen=True)
class Answers:
    source: str  # the file the answers were read from, relative to the submission; "" if none
    slots: dict[str, SlotAnswer]
    problem: str = ""  # why no answers could be read at all
    module: str = field(
        default_factory=lambda: active_lab().module_file
    )  # the student's module, relative to the submission
    files: dict[str, SourceFile] | None = None

    def report_lines(self, cases) -> tuple:
        """The answers slot by slot for the report (grader.judging.results.Answer): each cited
        slot with its case's status (a hidden case's as passed or not passed), the free text as
        ``not scored``, a slot left out ``missing``."""
        from grader.judging.results import Answer

        answer_tags = {b.id for b in active_lab().behaviours if b.part == "answers"}
        status: dict[str, str] = {}
        # a visible case's own status; a hidden one's as its one bit, and only where no visible
        # case of that slot's name says more (a hidden case never overrides a visible one)
        for c in sorted((c for c in cases if c.tag in answer_tags), key=lambda c: c.redacted):
            status.setdefault(c.case, ("passed" if c.status == "passed" else "not passed") if c.redacted else c.status)
        lines = []
        for name in slot_names():
            answer = self.slots.get(name)
            if answer is None:
                lines.append(Answer(name, "", "missing"))
            else:
                verdict = "not scored" if name in free_slots() else status.get(name, "not graded")
                lines.append(Answer(name, answer.text, verdict))
        return tuple(lines)

    def under(self, folder: str) -> Answers:
        """The same answers with every file named from one folder up (``folder/`` prefixed): for a
        module the tracer names from above its own folder (the reference, imported as a package)."""
        if not folder:
            return self
        moved = {
            k: replace(v, cited=tuple(Cited(f"{folder}/{c.file}", c.line) for c in v.cited))
            for k, v in self.slots.items()
        }
        files = {f"{folder}/{k}": v for k, v in (self.files or {}).items()}
        return replace(self, slots=moved, files=files, module=f"{folder}/{self.module}")

    def slot(self, name: str) -> SlotAnswer:
        if self.problem:
            return SlotAnswer(name, "", problem=self.problem)
        return self.slots.get(name) or SlotAnswer(
            name,
            "",
            problem=f"{self.source} has no '{name}:' line; add one, e.g. '{name}: {active_lab().module_file}:42'",
        )


def read_answers(submission: Path) -> Answers:
    """The answers of the submission folder ``submission``; never raises on a student's files."""
    if not submission.is_dir():  # a single file: no room for answers.md
        return Answers("", {}, problem=f"no answers found: hand in a folder, and {where_to_write()}")
    try:
        _, regular = walk_submission(submission)
        module = module_file(regular, active_lab().module_file)
    except (SubmissionProblem, OSError) as exc:
        return Answers("", {}, problem=safe_text(str(exc))[:300])
    found = _answers_file(regular, module)
    if isinstance(found, str) and found.startswith("!"):
        return Answers("", {}, problem=found[1:], module=module)
    if found is None:
        return Answers("", {}, problem=f"no answers found: {where_to_write()}", module=module)
    try:
        text = _read_text(submission / found, MAX_ANSWERS_BYTES)
        if found.endswith(".ipynb"):
            text = _notebook_text(text)
    except ValueError as exc:
        return Answers(found, {}, problem=f"{found}: {exc}", module=module)
    files: dict[str, SourceFile] = {}
    slots = {}
    for raw in text.splitlines():
        match = _slot_line(slot_names()).match(raw)
        if match is None:
            continue
        slot, value = match.group(1).lower(), match.group(2).strip().strip("`*").strip()
        if slot in slots:
            continue  # the first line of a slot counts
        shown = safe_text(value)[:MAX_FREE_TEXT]
        if slot in free_slots():  # the template's "<your answer ...>" is no answer yet
            slots[slot] = SlotAnswer(slot, "" if re.fullmatch(r"<[^<>]*>", value) else shown)
        else:
            slots[slot] = _citation(submission, regular, module, slot, value, shown, files)
    return Answers(found, slots, module=module, files=files)


def _answers_file(regular: list[str], module: str) -> str | None:
    near = os.path.dirname(module)
    for name in (ANSWERS_FILE, NOTEBOOK_FILE):
        for candidate in (name, os.path.join(near, name)):
            if candidate in regular:
                return candidate
    notebooks = sorted(r for r in regular if r.endswith(".ipynb") and ".ipynb_checkpoints" not in r)
    if len(notebooks) > 1:
        return (
            f"!two notebooks ({', '.join(notebooks[:3])}); keep one, name it {NOTEBOOK_FILE}, or write {ANSWERS_FILE}"
        )
    return notebooks[0] if notebooks else None


def _read_text(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise ValueError(f"could not be read ({type(exc).__name__})") from None
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes, so it was not read")
    return data.decode("utf-8", errors="replace")


def _notebook_text(text: str) -> str:
    """The markdown and raw cells of a notebook, one after another (its code is never run)."""
    import nbformat

    try:
        notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
        cells = notebook.get("cells", [])
    except Exception as exc:  # noqa: BLE001 - any malformed notebook is one message
        raise ValueError(f"is not a notebook nbformat can read ({type(exc).__name__})") from None
    parts = []
    for cell in cells if isinstance(cells, list) else []:
        if isinstance(cell, dict) and cell.get("cell_type") in ("markdown", "raw"):
            source = cell.get("source", "")
            parts.append("".join(source) if isinstance(source, list) else str(source))
    return "\n".join(parts)


def _citation(
    submission: Path, regular: list[str], module: str, slot: str, value: str, shown: str, files: dict
) -> SlotAnswer:
    if not value or "<" in value:
        return SlotAnswer(
            slot, shown, problem=f"'{slot}:' has no line number yet; write e.g. '{slot}: {active_lab().module_file}:42'"
        )
    cited: list[Cited] = []
    current = module
    for part in re.split(r"\s*(?:,|;|\band\b)\s*", value):
        match = _CITE.match(part.strip())
        if match is None:
            return SlotAnswer(
                slot,
                shown,
                problem=f"'{slot}: {shown[:60]}' is not a citation; write FILE:LINE, e.g. {active_lab().module_file}:42",
            )
        if match.group("file"):
            current = _resolve(match.group("file"), regular, module)
            if current is None:
                return SlotAnswer(
                    slot, shown, problem=f"{safe_text(match.group('file'))} is not a file of your submission"
                )
        first = int(match.group("first"))
        last = int(match.group("last") or first)
        if last < first or last - first + len(cited) >= MAX_CITED_LINES:
            return SlotAnswer(slot, shown, problem=f"'{slot}:' cites more than {MAX_CITED_LINES} lines; cite the line")
        source = files.get(_traced_name(current, module)) or _source(submission / current)
        files[_traced_name(current, module)] = source
        for line in range(first, last + 1):
            if not 1 <= line <= len(source.lines):
                return SlotAnswer(
                    slot, shown, problem=f"line {line} is past the end of {current} ({len(source.lines)} lines)"
                )
            cited.append(Cited(_traced_name(current, module), line))
    return SlotAnswer(slot, shown, tuple(cited))


def _traced_name(rel: str, module: str) -> str:
    """A file as the worker's tracer names it: relative to the submission's top, in every layout
    (grader.observe.locations.SUBMISSION_TOP; ``lab 3/MODULE.py`` too)."""
    return rel


def _resolve(name: str, regular: list[str], module: str) -> str | None:
    """A cited file name as the submission's file: its path, or its name when only one file has it."""
    name = name.replace("\\", "/").lstrip("./") if not name.startswith("..") else name
    if name in regular and name.endswith(".py"):
        return name
    if name == os.path.basename(module):
        return module
    named = [r for r in regular if r.endswith("/" + name) or r == name]
    return named[0] if len(named) == 1 and named[0].endswith(".py") else None


def _source(path: Path) -> SourceFile:
    try:
        text = _read_text(path, MAX_SOURCE_BYTES)
    except ValueError:
        return SourceFile((), {})
    return SourceFile(tuple(text.splitlines()), _line_kinds(text))


def _line_kinds(text: str) -> dict[int, str]:
    """Lines that can never be the right answer: blank, comment-only, docstring, def/class header."""
    kinds: dict[int, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            kinds[number] = "blank"
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and not text.splitlines()[token.start[0] - 1][: token.start[1]].strip():
                kinds[token.start[0]] = "a comment"
        tree = ast.parse(text)
    except (SyntaxError, tokenize.TokenError, ValueError):
        return kinds
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            header = "a class line" if isinstance(node, ast.ClassDef) else "a def line"
            for line in range(node.lineno, node.body[0].lineno):
                if kinds.get(line) is None:
                    kinds[line] = header
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                for line in range(first.lineno, (first.end_lineno or first.lineno) + 1):
                    kinds[line] = "part of a docstring"
    return kinds
