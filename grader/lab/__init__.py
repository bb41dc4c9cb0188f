"""The lab this process grades: one per process, chosen once by the command (``--lab``,
``$GRAPHGRADE_LAB``, else the default) and by the worker from what the grader sends it.

Every engine module that needs a lab's names asks :func:`active` at the moment it needs them
(never at import), so a process that activates another lab before loading its specs reads
that lab's tags, entry points, keyword names and check kinds throughout.
"""

from __future__ import annotations

from grader.lab.interface import Behaviour, EntryPoint, Lab, OwnCheck, ProvidedObject
from grader.lab.loading import LabError, lab_root, load_lab, preload_provided
from grader.lab.vocabulary import OpVocabulary
from grader.lab.vocabulary import op_vocabulary as _op_vocabulary

_ACTIVE: list[Lab] = []


def active() -> Lab:
    """The lab this process grades (the default lab until one is activated)."""
    if not _ACTIVE:
        _ACTIVE.append(load_lab())
    return _ACTIVE[0]


def activate(lab: Lab) -> Lab:
    """Make ``lab`` the one this process grades; returns it."""
    _ACTIVE[:] = [lab]
    return lab


def use(given: str | None = None) -> Lab:
    """Load the lab a command names (``--lab``; else ``$GRAPHGRADE_LAB``; else the default) and
    activate it. A lab already active at the same folder is kept as it is."""
    root = lab_root(given)
    if _ACTIVE and _ACTIVE[0].root == root:
        return _ACTIVE[0]
    return activate(load_lab(root))


def op_vocabulary(lab: Lab | None = None) -> OpVocabulary | None:
    """The op vocabulary of ``lab`` (default: the lab this process grades), None for a lab without
    ops (:mod:`grader.lab.vocabulary`)."""
    return _op_vocabulary(lab if lab is not None else active())


def preload_pack(lab: Lab) -> None:
    """Import every part of the pack the worker uses (its op vocabulary, its provided objects), so
    that a worker confined before it imports the submission needs no read access to the lab's
    folder, and the vocabulary's guarded classes are taken as they were before any submission."""
    _op_vocabulary(lab)
    preload_provided(lab)


__all__ = [
    "Behaviour",
    "EntryPoint",
    "Lab",
    "LabError",
    "OpVocabulary",
    "OwnCheck",
    "ProvidedObject",
    "activate",
    "active",
    "op_vocabulary",
    "preload_pack",
    "use",
]
