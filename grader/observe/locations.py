"""Where in the submission's own files something happened: the worker's half of "the line in your code".

Three things are located, each at the moment it happens, inside the worker:

* a grader op's call (the ``GraderOp`` of the lab's op vocabulary, :mod:`grader.lab.vocabulary`,
  asks the case's :class:`Locator` for its caller): the chain of the submission's frames that made
  the call, innermost first;
* a call of the ``bump`` of the submission's launch counter (:func:`observe_bumps` wraps it for one
  case): the amount and the same chain;
* an exception a step raised (:meth:`Locator.traceback`): the submission's frames of its
  traceback only, outermost first, the innermost last.

A frame is ``[file relative to the submission, line, function, source line]``, each part
bounded (:data:`grader.framing.MAX_FRAME_TEXT`). Frames of anything else (the grader, numpy,
the standard library) are never recorded: a student sees their own code and nothing of ours.
Nothing here judges; the grader validates the records (:mod:`grader.observations`) and says what
they mean (:mod:`grader.judging.locating`).
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import traceback
from types import FrameType, ModuleType, TracebackType

from grader import framing

WALK_LIMIT = 16  # frames looked at above a call, at most (the grader's own frames lie beyond)
# The submission's folder, in a worker (grader.run.worker.submission sets it after the import);
# None elsewhere (validate's reference backends, tests): a module's own folder is then its top.
SUBMISSION_TOP: str | None = None


@functools.lru_cache(maxsize=64)
def _real(path: str) -> str:
    return os.path.realpath(path)


@functools.lru_cache(maxsize=4096)  # a worker's cases share their files: resolved once, not once a case
def _relative(root: str | None, filename: str) -> str | None:
    if root is None or filename.startswith("<"):
        return None
    try:
        real = os.path.realpath(filename)
    except (OSError, ValueError):
        return None
    return os.path.relpath(real, root) if real.startswith(root + os.sep) else None


def _cut(text: str, limit: int = framing.MAX_FRAME_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Locator:
    """The submission's files (under ``root``) and one step's table of call sites.

    A site is a tuple of frames; :meth:`site` returns its index in the step's table (the same
    chain twice is one site), or -1 once the table holds :data:`grader.framing.MAX_SITES`."""

    def __init__(self, root: str | None) -> None:
        self.root = _real(root) if root else None
        self.sites: list[tuple[tuple[str, int, str], ...]] = []
        self._index: dict[tuple[tuple[str, int, str], ...], int] = {}
        self.case_sites = 0  # sites recorded in this case's steps so far (grader.framing.MAX_CASE_SITES)
        self.case_trace_frames = 0

    @classmethod
    def of_module(cls, module: ModuleType) -> Locator:
        """The locator for a submission imported as ``module``: its files are named relative to
        the submission's top (:data:`SUBMISSION_TOP`, which a worker sets once it has imported
        the submission: a module in a package folder is named with its folder), else to the module's folder."""
        try:
            path = module.__file__
        except BaseException:  # noqa: BLE001 - a module object of the submission's making
            path = None
        if not isinstance(path, str):
            return cls(None)
        top = SUBMISSION_TOP
        if top is not None and _relative(_real(top), path) is not None:
            return cls(top)
        return cls(os.path.dirname(path))

    def relative(self, filename: str) -> str | None:
        """``filename`` relative to the submission's folder, or None when it is not one of its files."""
        return _relative(self.root, filename)

    # ------------------------------------------------------------ call sites
    def new_step(self) -> None:
        self.sites.clear()
        self._index.clear()

    def site(self, frame: FrameType | None) -> int:
        """The site of a call whose caller is ``frame``: the submission's frames from the first of
        them outwards, until a frame that is not the submission's (innermost first)."""
        chain: list[tuple[str, int, str]] = []
        seen = 0
        while frame is not None and seen < WALK_LIMIT and len(chain) < framing.MAX_SITE_FRAMES:
            code = frame.f_code
            relative = self.relative(code.co_filename)
            if relative is not None:
                chain.append((code.co_filename, frame.f_lineno or 0, code.co_name))
            elif chain:
                break
            frame = frame.f_back
            seen += 1
        if not chain:
            return -1
        key = tuple(chain)
        index = self._index.get(key)
        if index is None:
            if len(self.sites) >= framing.MAX_SITES or self.case_sites >= framing.MAX_CASE_SITES:
                return -1
            index = self._index[key] = len(self.sites)
            self.sites.append(key)
            self.case_sites += 1
        return index

    def frame_wire(self, filename: str, line: int, function: str, source: str | None = None) -> list:
        if source is None:
            source = linecache.getline(filename, line)
        return [
            _cut(self.relative(filename) or os.path.basename(filename)),
            int(line),
            _cut(function),
            _cut(source.strip()),
        ]

    def sites_wire(self) -> list:
        return [[self.frame_wire(*frame) for frame in site] for site in self.sites]

    # ------------------------------------------------------------ exceptions
    def traceback(self, tb: TracebackType | None) -> list:
        """The submission's frames of a traceback (the last :data:`grader.framing.MAX_TRACE_FRAMES`, and
        no more than :data:`grader.framing.MAX_CASE_TRACE_FRAMES` in a case), outermost first."""
        try:
            keep = min(framing.MAX_TRACE_FRAMES, framing.MAX_CASE_TRACE_FRAMES - self.case_trace_frames)
            if keep <= 0:
                return []
            picked = [(f, line) for f, line in traceback.walk_tb(tb) if self.relative(f.f_code.co_filename) is not None]
            picked = picked[-keep:]
            self.case_trace_frames += len(picked)
            return [self.frame_wire(f.f_code.co_filename, line or 0, f.f_code.co_name) for f, line in picked]
        except Exception:  # noqa: BLE001 - an exotic traceback must not cost the step's record
            return []


def observe_bumps(module: ModuleType, locator: Locator, bumps: list, counter_name: str | None) -> object:
    """Record every call of the submission's launch counter's ``bump`` (the lab's
    ``launch_counter`` entry point, ``counter_name``; none: nothing to record) in ``bumps`` as
    ``[amount, site]`` (amount -1 when it is not an int), for as long as the returned undo
    object is not called. Only a ``bump`` defined as a classmethod or staticmethod of the class
    itself is wrapped; anything else is left alone (its launches are still counted)."""
    if counter_name is None:
        return _nothing
    try:
        counter = getattr(module, counter_name)
        raw = counter.__dict__.get("bump") if isinstance(counter, type) else None
    except BaseException:  # noqa: BLE001
        return _nothing
    if not isinstance(raw, (classmethod, staticmethod)):
        return _nothing
    func = raw.__func__
    bound_class = isinstance(raw, classmethod)

    def recorded(*args, **kwargs):
        amount = args[1 if bound_class else 0] if len(args) > (1 if bound_class else 0) else kwargs.get("k", 1)
        if len(bumps) < framing.MAX_BUMPS:
            counted = amount if type(amount) is int and -(2**62) < amount < 2**62 else -1
            bumps.append([counted, locator.site(sys._getframe(1))])
        return func(*args, **kwargs)

    functools.update_wrapper(recorded, func)
    try:
        counter.bump = classmethod(recorded) if bound_class else staticmethod(recorded)
    except BaseException:  # noqa: BLE001 - a class that refuses new attributes is left alone
        return _nothing

    def undo() -> None:
        try:
            counter.bump = raw
        except BaseException:  # noqa: BLE001
            pass

    return undo


def _nothing() -> None:
    return None
