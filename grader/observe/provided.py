"""The objects a lab provides to student code (``lab.yaml: provided``), inside the worker.

A ``build: NAME`` step of a provided object builds it from the pack's own code (imported by
path, :func:`grader.lab.loading.pack_attribute`), never from the submission:
``factory(setup(**kwargs), log)``, with ``log`` a fresh log of the pack's log class, created and
held here (out of the submission's reach by any name the case binds). For every step, the
calls each built object's log recorded while the step ran are sent as plain lists (text and
integers, then the call's site in the submission, from the worker's :class:`Locator`), bounded
as the op witness is.
"""

from __future__ import annotations

import sys
from typing import Any

from grader import observations
from grader.lab import Lab
from grader.lab.loading import pack_attribute
from grader.observe.locations import Locator


class ProvidedObjects:
    """The provided objects one case built, by their ``as`` names, and their logs."""

    def __init__(self, lab: Lab, locator: Locator) -> None:
        self.lab = lab
        self.locator = locator
        self.logs: dict[str, Any] = {}  # the step's ``as`` name -> the object's log

    def build(self, name: str, bound_as: str | None, kwargs: dict) -> Any:
        provided = self.lab.provided_object(name)
        assert provided is not None and bound_as is not None  # the loader requires both
        locator = self.locator
        log = pack_attribute(self.lab, provided.log)(site=lambda: locator.site(sys._getframe(1)))
        built = pack_attribute(self.lab, provided.factory)(pack_attribute(self.lab, provided.setup)(**kwargs), log)
        self.logs[bound_as] = log
        return built

    def marks(self) -> dict[str, int]:
        return {name: log.mark() for name, log in self.logs.items()}

    def since(self, marks: dict[str, int]) -> dict | None:
        """Each log's calls after its mark (a log new in this step: all of them), as the wire has
        them; None when the case built no provided object."""
        if not self.logs:
            return None
        out = {}
        for name, log in list(self.logs.items())[: observations.MAX_PROVIDED]:
            start = marks.get(name, 0)
            calls = log.calls[start : start + observations.MAX_WITNESS]
            sites = log.sites[start : start + observations.MAX_WITNESS]
            out[name] = [[*_plain(call), site] for call, site in zip(calls, sites)]
        return out


def _plain(call: Any) -> list:
    """A logged call as text and integers only (anything else as its type's name), at most
    ``MAX_CALL_ITEMS`` items."""
    items = []
    for item in tuple(call)[: observations.MAX_CALL_ITEMS]:
        if isinstance(item, str):
            items.append(observations.shorten(item))
        elif isinstance(item, int) and not isinstance(item, bool) and -(1 << 62) < item < (1 << 62):
            items.append(item)
        else:
            items.append(observations.shorten(type(item).__name__))
    return items
