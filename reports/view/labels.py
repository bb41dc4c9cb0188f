"""The words shown for the vocabularies: behaviour tags (the lab's titles), case statuses and tag groups."""

from __future__ import annotations

from grader.lab import active as active_lab


def tag_label(tag: str) -> str:
    """A behaviour tag's title, as the lab's lab.yaml gives it (the tag itself when unknown)."""
    return next((b.title for b in active_lab().behaviours if b.id == tag), tag)


STATUS_LABELS: dict[str, str] = {
    "passed": "Passed",
    "failed": "Failed",
    "error": "Error",
    "timeout": "Timed out",
    "crashed": "Crashed",
    "skipped": "Skipped",
}

STATUS_ICONS: dict[str, str] = {
    "passed": "\u2713",  # check mark
    "failed": "\u2717",  # ballot x
    "error": "!",
    "timeout": "\u231b",  # hourglass
    "crashed": "\u26a1",  # high voltage
    "skipped": "\u2013",  # en dash
}

GROUP_TITLES = {
    "core": "Core lab",
    "stricter": "Core lab, graphgrade's stricter readings (outside the core points)",
    "answers": "Definition of done: your answers, citing your lines",
    "stretch": "Stretch goals",
    "other": "Other",
}
