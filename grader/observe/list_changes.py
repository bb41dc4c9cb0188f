"""Where a list a loop walked empty was last changed (issue 34, point 3): the worker's half of "the
ops never ran because the list that held them was emptied".

In a failed case's re-run (grader.run.relocating), :class:`ListChanges` is told every line of the
submission's that a traced call runs (grader.observe.origins). A line that calls a mutating method
on a local name (``run.clear()``, ``run.append(op)``) notes that list object (exactly a ``list``)
and the line, for the rest of the case: an earlier step's list is often walked by a later one (a
function that groups ops returns what a later step runs). A ``for`` over a plain name that finds
that very list empty (``for op in group:`` in a grouped op whose ``group`` is the list the
grouping loop then cleared) notes, once per step, where it was last changed. Nothing here
judges: the lab's check of a wrong output does.
"""

from __future__ import annotations

from types import FrameType

from grader.observe.source_facts import list_lines

MAX_LISTS = 64  # lists whose last change a case keeps (each kept alive while the case runs)
Where = tuple[str, int, str]


class ListChanges:
    """One case's lists changed by the submission's lines, and the step's emptied loop."""

    def __init__(self) -> None:
        self._changed: dict[int, tuple[list, Where]] = {}  # id -> the list (kept alive), its last change
        self.emptied: Where | None = None  # this step's first loop over a changed list found empty

    def new_step(self) -> None:
        self.emptied = None

    def on_line(self, frame: FrameType, filename: str, line: int, function: str) -> None:
        facts = list_lines(filename).get(line)
        if facts is None:
            return
        names, walked = facts
        try:
            local = frame.f_locals
        except Exception:  # noqa: BLE001 - an odd frame: nothing noted
            return
        for name in names:
            value = local.get(name)
            if type(value) is list and (id(value) in self._changed or len(self._changed) < MAX_LISTS):
                self._changed[id(value)] = (value, (filename, line, function))
        if walked and self.emptied is None:
            value = local.get(walked)
            held = self._changed.get(id(value))
            if held is not None and held[0] is value and type(value) is list and not list.__len__(value):
                self.emptied = held[1]
