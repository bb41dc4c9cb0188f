"""A step's snapshot of its object, as the grader reads it: each entry of the object's mapping
attribute, bounded and validated by the fields the lab declares (``lab.yaml: snapshot``,
:class:`grader.lab.interface.Snapshot`) and nothing else.

The worker's interpreter takes the snapshot (:meth:`grader.observe.interpreter.CaseInterpreter.snapshot`)
and sends it in a step's record (``graphs``, :class:`grader.framing.StepRecord`); an entry's record
holds ``key`` (text), ``entry_id`` (the entry object's identity within the case) and each declared
field's keys (:attr:`grader.lab.interface.SnapshotField.wire_keys`). Anything else is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader import validation
from grader.framing import MAX_BLOB_BYTES, MAX_TEXT, ProtocolError
from grader.lab.interface import Snapshot
from grader.safetext import safe_text

MAX_GRAPHS = 64  # entries of one snapshot
MAX_ELEMENTS = (
    MAX_BLOB_BYTES  # elements of a shape (as grader.observations.MAX_ELEMENTS: a bool array of the largest blob)
)


@dataclass(frozen=True)
class EntryObservation:
    """One entry of a step's snapshot of its object, as it was right after the step: its key's
    text, the entry object's identity within the case (-1: not recorded) and the lab's declared
    fields by their record keys (a buffer's ``NAME``, ``NAME_id``, ``NAME_address``), each also
    read as an attribute (``entry.NAME``): a shape is a tuple of ints, an int an int, an array or
    a buffer a plain ``numpy.ndarray``, and any of them None when the entry held none."""

    key: str
    entry_id: int
    fields: tuple[tuple[str, Any], ...]

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("__"):
            for field, value in self.__dict__.get("fields", ()):
                if field == name:
                    return value
        raise AttributeError(name)


def decode(
    snapshot: Snapshot | None, raw: Any, where: str, version: int, array: Callable[[Any, str], np.ndarray]
) -> tuple[EntryObservation, ...] | None:
    """A step's snapshot (None: the step took none), each entry read by ``snapshot``'s fields
    alone; ``array`` rebuilds an encoded array (the frame's decoder: each blob used once).
    ``version``: the frame's; before 3 an entry's identity was not sent."""
    if raw is None:
        return None
    if snapshot is None:
        raise ProtocolError("the lab declares no snapshot: a step records none", where)
    entries = []
    for i, g in enumerate(validation.bounded_list(raw, where, MAX_GRAPHS)):
        at = f"{where}[{i}]"
        g = validation.keys_within(g, snapshot.wire_keys, at)
        key = safe_text(validation.text(g.get("key"), f"{at}.key", MAX_TEXT))
        fields: list[tuple[str, Any]] = []
        for field in snapshot.fields:
            name, value = field.name, g.get(field.name)
            if field.kind == "buffer":  # its identity and address: always sent, beside its copy
                fields.append((f"{name}_id", validation.integer(g.get(f"{name}_id"), f"{at}.{name}_id")))
                address = validation.integer(g.get(f"{name}_address"), f"{at}.{name}_address")
                fields.append((f"{name}_address", address))
            if field.kind in ("array", "buffer"):
                is_array = isinstance(value, dict) and "ndarray" in value
                fields.append((name, array(value["ndarray"], f"{at}.{name}") if is_array else None))
            elif field.kind == "shape":
                shape = validation.array_shape(value, f"{at}.{name}", MAX_ELEMENTS) if value is not None else None
                fields.append((name, shape))
            else:
                fields.append((name, validation.integer(value, f"{at}.{name}") if value is not None else None))
        entry_id = validation.integer(g.get("entry_id"), f"{at}.entry_id") if version >= 3 else -1
        entries.append(EntryObservation(key, entry_id, tuple(fields)))
    return tuple(entries)
