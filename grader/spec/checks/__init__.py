"""The check kinds: one module per kind, each a :class:`~grader.spec.checks.base.Check` subclass.

Importing this package imports every module in it, and each check class registers
itself as it is defined (see :mod:`grader.spec.checks.base`). ``CHECK_KINDS`` lists the
kinds in their documented order; :func:`check_class` finds the class of a YAML key.
To add a kind, add one module here with one class (its fields, ``kind``, ``order``,
``parse``, ``schema`` and ``judge``) and its tests: the loader, ``specs/schema.json``
(regenerate it with ``graphgrade schema``) and the judge pick it up.
"""

from __future__ import annotations

import importlib
import pkgutil

from grader.lab import active as active_lab
from grader.spec.checks.base import REGISTRY, Check, Judging
from grader.spec.checks.pack_owned import pack_check_class


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


def lab_check_kinds() -> tuple[str, ...]:
    """The check kinds a spec of the active lab may use: the engine's kinds the lab shares (all of
    them unless its lab.yaml lists some), then the lab's own, in its order."""
    lab = active_lab()
    return tuple(k for k in CHECK_KINDS if lab.allows_check(k)) + tuple(c.kind for c in lab.own_checks)


def check_class(kind: str) -> type[Check]:
    """The class of a check kind: the engine's, or one of the active lab's own (KeyError for an
    unknown one)."""
    if kind in REGISTRY:
        return REGISTRY[kind]
    own = active_lab().own_check(kind)
    if own is None:
        raise KeyError(kind)
    return pack_check_class(active_lab(), own)


__all__ = ["CHECK_CLASSES", "CHECK_KINDS", "Check", "Judging", "check_class", "lab_check_kinds"]
