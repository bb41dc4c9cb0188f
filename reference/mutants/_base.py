"""Helpers for the mutants: the reference's source with one realistic mistake edited in.

A mutant module holds its one-line docstring (the mistake, as the audit prints
it), its ``TAG`` (the behaviour whose rule it breaks) and ``EDITS``: plain-text
edits of ``reference/cudagraph.py``, each a pair ``(before, after)`` where
``before`` is text that occurs exactly once in the reference (indentation and
all) and ``after`` replaces it. Its last line, ``run_edited_reference(globals(),
EDITS)``, executes the edited source as the mutant module itself, so a mutant
file is a complete submission: the grader imports it as ``cudagraph`` like any
student's file. Nothing is monkeypatched and no private name of the reference
is frozen: the reference can be refactored freely, and only an edit whose
``before`` text changed stops applying, loudly (:class:`MutantEditError`, one
line naming the mutant file and the missing text; the audit reports that mutant
as broken). ``graphgrade audit --deep`` makes its mutants the same way
(grader/commands/mutation.py), systematically instead of by hand.

The baselines and ``graphgrade validate`` use :func:`fresh_reference` and
:func:`fresh_template`: private copies of the unedited sources.
"""

from __future__ import annotations

import itertools
import linecache
import sys
import types
from collections.abc import Sequence
from pathlib import Path

from reference import CONTRACT_NAMES

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_SOURCE = ROOT / "reference" / "cudagraph.py"
TEMPLATE_SOURCE = ROOT / "student_template" / "cudagraph.py"

Edit = tuple[str, str]

_serial = itertools.count()


class MutantEditError(Exception):
    """An edit's ``before`` text is not in the reference exactly once: the reference changed under
    the mutant (update the edit), or the edit was mistyped. Never a silent, unedited mutant."""


def _display(path: str | Path) -> str:
    """A mutant file as staff name it: relative to the repository when it lies inside it, else its
    file name (the grader's copy is a ``cudagraph.py`` in scratch space; the audit names the mutant)."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except (ValueError, OSError):
        return Path(path).name


def _excerpt(text: str, limit: int = 80) -> str:
    shown = repr(text.strip("\n"))
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def apply_edits(source: str, edits: Sequence[Edit], mutant: str, target: str = "reference/cudagraph.py") -> str:
    """``source`` with every ``(before, after)`` edit applied in order; each ``before`` must occur
    exactly once in the text as the earlier edits left it, else :class:`MutantEditError`."""
    if not edits:
        raise MutantEditError(f"{mutant}: EDITS is empty, so this mutant would be the reference itself")
    for number, edit in enumerate(edits, 1):
        if not (isinstance(edit, tuple) and len(edit) == 2 and all(isinstance(part, str) for part in edit)):
            raise MutantEditError(f"{mutant}: edit {number} of {len(edits)} is not a (before, after) pair of strings")
        before, after = edit
        count = source.count(before) if before else 0
        if count != 1:
            where = "is not in" if count == 0 else f"occurs {count} times in"
            raise MutantEditError(
                f"{mutant}: edit {number} of {len(edits)}: {_excerpt(before)} {where} {target} "
                "(the reference changed there: update the edit's text)"
            )
        source = source.replace(before, after, 1)
    return source


def run_edited_reference(namespace: dict, edits: Sequence[Edit]) -> None:
    """Execute ``reference/cudagraph.py`` with ``edits`` applied in ``namespace``, the calling
    mutant's ``globals()``: the mutant module becomes the edited reference (every contract name
    at its top level, as in a student's file). Its own docstring stays its own."""
    mutant = _display(namespace.get("__file__") or namespace.get("__name__", "a mutant"))
    source = apply_edits(REFERENCE_SOURCE.read_text(encoding="utf-8"), edits, mutant)
    # A name of its own, so tracebacks through an edited line show the edited text, not the
    # reference's line that happens to carry the same number.
    filename = f"{REFERENCE_SOURCE} (edited by {mutant})"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    doc = namespace.get("__doc__")
    # dont_inherit: compiled as the reference file itself is, not under this module's __future__ imports
    code = compile(source, filename, "exec", dont_inherit=True)
    exec(code, namespace)  # noqa: S102 - our own reference source, not a submission
    namespace["__doc__"] = doc


def fresh_module(source: Path, owner: str) -> types.ModuleType:
    """Execute ``source`` into a new module object named after ``owner`` (the calling module)."""
    name = f"_graphgrade_copy_{next(_serial)}_{owner.replace('.', '_')}"
    module = types.ModuleType(name, None)
    module.__file__ = str(source)
    sys.modules[name] = module  # dataclasses look their module up here while the class is built
    code = compile(source.read_text(encoding="utf-8"), str(source), "exec", dont_inherit=True)
    exec(code, module.__dict__)  # noqa: S102 - our own reference source, not a submission
    return module


def fresh_reference(owner: str) -> types.ModuleType:
    """A private copy of the numpy reference (the control for ``graphgrade validate``)."""
    return fresh_module(REFERENCE_SOURCE, owner)


def fresh_template(owner: str) -> types.ModuleType:
    """A private copy of the untouched student template."""
    return fresh_module(TEMPLATE_SOURCE, owner)


def export(module: types.ModuleType, namespace: dict) -> None:
    """Publish every contract name of ``module`` in ``namespace`` (a baseline's ``globals()``)."""
    for name in CONTRACT_NAMES:
        namespace[name] = getattr(module, name)
