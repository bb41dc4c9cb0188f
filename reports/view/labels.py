"""The words shown for the fixed vocabularies: behaviour tags, case statuses and tag groups."""

from __future__ import annotations

TAG_LABELS: dict[str, str] = {
    "launch-counter": "Launch counter",
    "eager": "Eager runs",
    "shape-cache": "Shape-keyed graph cache",
    "static-buffer": "Static input buffer",
    "single-launch-replay": "One launch per replay",
    "piecewise": "Piecewise capture",
    "padding": "Batch padding",
    "warmup": "Warm-up calls",
    "fusion": "Elementwise fusion",
    "state-machine": "Decode-step state machine",
    "notebook-answers": "Notebook answers (cited lines)",
}


def tag_label(tag: str) -> str:
    return TAG_LABELS.get(tag, tag)


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
