"""Whether this install is a student kit: ``grader/KIT.json``, written by ``graphgrade
student-kit`` (:mod:`grader.commands.kit`). A module of its own so that what only needs to know
(which specs a command reads, :mod:`grader.commands.spec_source`) does not import the kit
builder, which imports the bundles, which register a command that reads specs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grader

KIT_MARKER = "KIT.json"
KIT_FORMAT = 1


def kit_info() -> dict[str, Any] | None:
    """What this kit was built with (``grader/KIT.json``), or None in the full package."""
    marker = Path(grader.__file__).resolve().parent / KIT_MARKER
    try:
        return json.loads(marker.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {"format": KIT_FORMAT}  # a damaged marker still means: this is a kit
