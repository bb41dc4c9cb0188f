"""Where a value the grader reads came from in the submission's code: the worker's half of
"the line that produced it" (issue 34, point 3).

While a step runs, :class:`OriginTracer` follows the submission's own frames and nothing else
(every other frame, the grader's ops and numpy included, is given no trace function, so it runs
without line events). It notes, for the step:

* ``returned``: the line of the ``return`` that ended the first of the submission's functions
  the step called (a method, a property's getter, ``__call__``), with whether that statement
  only hands back a constant or a name (``return StepMode.WARMUP``, ``return self.n``), when the
  choice was made by a test above it;
* ``tested``: the last ``if``/``elif``/``while`` test that function ran before it returned;
* ``assigned``: for a step that reads an attribute, or calls a function that only returns one
  (``return self._count``), the last line of the case so far that assigned an attribute of that
  name (``self.graph_id = ...``, ``cls.n += k``).

Each is a frame ``[kind, file, line, function, source]`` in the step's ``origin`` list. Nothing
here judges: which of them names the cause of a failure is the judge's choice
(:mod:`grader.spec.locating`).
"""

from __future__ import annotations

import ast
import functools
import sys
from types import CodeType, FrameType

PLAIN_RETURN = (ast.Constant, ast.Name, ast.Attribute)  # hands back what was decided elsewhere


@functools.lru_cache(maxsize=64)
def line_facts(filename: str) -> dict[int, tuple[tuple[str, ...], bool, bool, str]]:
    """Per line of a source file: the attribute names it assigns, whether it is an
    ``if``/``elif``/``while`` test, whether it is a ``return`` of a plain value, and the
    attribute that return hands back (``return self._count``: ``_count``), else ""."""
    try:
        with open(filename, encoding="utf-8") as source:
            tree = ast.parse(source.read(), filename)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return {}
    facts: dict[int, tuple[tuple[str, ...], bool, bool, str]] = {}

    def add(line: int, names=(), test=False, plain=False, attribute="") -> None:
        old = facts.get(line, ((), False, False, ""))
        facts[line] = (old[0] + tuple(names), old[1] or test, old[2] or plain, old[3] or attribute)

    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.attr for target in targets for t in ast.walk(target) if isinstance(t, ast.Attribute)]
            if names:
                add(node.lineno, names)
        elif isinstance(node, (ast.If, ast.While)):
            add(node.lineno, test=True)
        elif isinstance(node, ast.Return):
            attribute = node.value.attr if isinstance(node.value, ast.Attribute) else ""
            add(node.lineno, plain=node.value is None or isinstance(node.value, PLAIN_RETURN), attribute=attribute)
    return facts


class OriginTracer:
    """One case's tracer: :meth:`run` runs one step under it; :meth:`origin` is what it saw."""

    def __init__(self, locator) -> None:
        self.locator = locator
        self._mine: dict[CodeType, str | None] = {}  # code -> its file when it is the submission's
        self.assigned: dict[str, tuple[str, int, str]] = {}  # attribute name -> its last assignment
        self._top: FrameType | None = None
        self.returned: tuple[str, int, str, bool] | None = None
        self.returned_attribute = ""  # the attribute a plain return handed back
        self.tested: tuple[str, int, str] | None = None

    def _file(self, code: CodeType) -> str | None:
        try:
            return self._mine[code]
        except KeyError:
            mine = code.co_filename if self.locator.relative(code.co_filename) is not None else None
            self._mine[code] = mine
            return mine

    def _call(self, frame: FrameType, event: str, arg) -> object:
        if event != "call" or self._file(frame.f_code) is None:
            return None
        if self._top is None and self.returned is None:
            self._top = frame
        return self._line

    def _line(self, frame: FrameType, event: str, arg) -> object:
        code = frame.f_code
        if event == "line":
            facts = line_facts(code.co_filename).get(frame.f_lineno)
            if facts is not None:
                names, test = facts[0], facts[1]
                for name in names:
                    self.assigned[name] = (code.co_filename, frame.f_lineno, code.co_name)
                if test and frame is self._top:
                    self.tested = (code.co_filename, frame.f_lineno, code.co_name)
        elif event == "return" and frame is self._top:
            facts = line_facts(code.co_filename).get(frame.f_lineno)
            self.returned = (code.co_filename, frame.f_lineno, code.co_name, bool(facts and facts[2]))
            self.returned_attribute = facts[3] if facts else ""
            self._top = None
        return self._line

    def run(self, perform, *args):
        """``perform(*args)`` under the tracer; what it returns or raises passes through."""
        self._top, self.returned, self.tested, self.returned_attribute = None, None, None, ""
        previous = sys.gettrace()
        sys.settrace(self._call)
        try:
            return perform(*args)
        finally:
            sys.settrace(previous)
            self._top = None

    def origin(self, read_attribute: str | None) -> list:
        """This step's origin frames, ``[kind, file, line, function, source]`` each."""
        frames = []
        if self.returned is not None:
            filename, line, function, plain = self.returned
            kind = "returned-plain" if plain else "returned"
            frames.append([kind, *self.locator.frame_wire(filename, line, function)])
            if self.tested is not None:
                frames.append(["tested", *self.locator.frame_wire(*self.tested)])
            elif plain and self.returned_attribute in self.assigned:  # return self._count: where it was set
                frames.append(["assigned", *self.locator.frame_wire(*self.assigned[self.returned_attribute])])
        elif read_attribute is not None and read_attribute in self.assigned:
            frames.append(["assigned", *self.locator.frame_wire(*self.assigned[read_attribute])])
        return frames
