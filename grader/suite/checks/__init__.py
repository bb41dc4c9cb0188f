"""The check kinds: one module per kind, each a :class:`~grader.suite.checks.base.Check` subclass.

Importing this package imports every module in it, and each check class registers
itself as it is defined (see :mod:`grader.suite.checks.base`). ``CHECK_KINDS`` lists the
kinds in their documented order; :func:`check_class` finds the class of a YAML key.
To add a kind, add one module here with one class (its fields, ``kind``, ``order``,
``parse``, ``schema`` and ``judge``) and its tests: the loader, ``specs/schema.json``
(regenerate it with ``graphgrade schema``) and the judge pick it up.
"""

from __future__ import annotations

import importlib
import pkgutil

from grader.lab import active as active_lab
from grader.suite.checks.base import REGISTRY, Check, Judging
from grader.suite.checks.pack_owned import pack_check_class, pack_kind_classes


def _import_every_kind() -> None:
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name not in ("base", "pack_owned"):
            importlib.import_module(f"{__name__}.{module.name}")
    if not REGISTRY:
        raise ImportError(f"{__name__}: no check kinds found in {list(__path__)}")
    orders = [cls.order for cls in REGISTRY.values()]
    if len(set(orders)) != len(orders):
        raise ImportError(
            f"{__name__}: two check kinds share an 'order': {sorted((c.order, k) for k, c in REGISTRY.items())}"
        )


_import_every_kind()

CHECK_CLASSES: tuple[type[Check], ...] = tuple(sorted(REGISTRY.values(), key=lambda cls: cls.order))
CHECK_KINDS: tuple[str, ...] = tuple(cls.kind for cls in CHECK_CLASSES)


def lab_check_classes() -> tuple[type[Check], ...]:
    """The check classes a spec of the active lab may use, in their order: the engine's kinds the
    lab shares (all of them unless its lab.yaml lists some) and the kinds its pack's
    ``checks.modules`` define (the pack's Python, loaded by path)."""
    lab = active_lab()
    shared = [cls for cls in CHECK_CLASSES if lab.allows_check(cls.kind)]
    return tuple(sorted([*shared, *pack_kind_classes(lab)], key=lambda cls: cls.order))


def lab_check_kinds() -> tuple[str, ...]:
    """The check kinds a spec of the active lab may use: :func:`lab_check_classes`' kinds, then
    the lab's own declared ones (``checks.own``), in its order."""
    return tuple(cls.kind for cls in lab_check_classes()) + tuple(c.kind for c in active_lab().own_checks)


def check_class(kind: str) -> type[Check]:
    """The class of a check kind: the engine's, one of the active lab's pack kinds, or one of its
    own declared ones (KeyError for an unknown one)."""
    if kind in REGISTRY:
        return REGISTRY[kind]
    packed = next((cls for cls in pack_kind_classes(active_lab()) if cls.kind == kind), None)
    if packed is not None:
        return packed
    own = active_lab().own_check(kind)
    if own is None:
        raise KeyError(kind)
    return pack_check_class(active_lab(), own)


__all__ = ["CHECK_CLASSES", "CHECK_KINDS", "Check", "Judging", "check_class", "lab_check_classes", "lab_check_kinds"]
