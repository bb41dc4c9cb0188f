"""The line tracer of a probe step (issue 33): what each of the submission's lines did, observed.

Runs inside the sandboxed worker, next to the submission, and only observes: a runner built
by the probe step is called once (the capture) and once more with a new input of the same
shape (the replay) under :func:`sys.settrace`, limited to frames of the submission's own
files. At every event of such a frame, the state that matters is compared with the last
event's, and a change is credited to the line that was running (the innermost frame of the
submission) and to the line one level up that called it:

* the launch counter (the ``n`` of the lab's ``launch_counter`` entry point; the counter's own
  methods are not followed, so a bump is credited to the line that called ``bump``);
* during the capture, the length of each dict the runner holds (its cache gains its entry);
* during the replay, whether the captured static buffer (the array the first op was handed
  during the capture) now holds the new input in its real rows;
* during the replay, the innermost frame's locals and return values: bound to the cache's
  key (or, with padding, to the padded batch size) or to the cached entry.

It also records the order of lines of each call: the last line both ran alike is where a
first and a second call of one shape part ways. The result is plain data
(:mod:`grader.trace_facts`); the grader judges it.
"""

from __future__ import annotations

import sys
from types import CodeType, FrameType, ModuleType
from typing import Any

import numpy as np
from numpy import array_equal as _array_equal  # bound before any submission runs (it may patch numpy's)

from grader import trace_facts as tf
from grader.observe.locations import Locator

MAX_SEQUENCE = 20000  # line events remembered per call, to find where the two calls part ways


def _counter_codes(module: ModuleType, name: str | None) -> set:
    """The code of the launch counter's own methods (not followed: a bump counts for its caller);
    ``name``: the lab's ``launch_counter`` entry point (None: the lab has none)."""
    codes = set()
    try:
        counter = module.__dict__.get(name) if name is not None else None
        for value in vars(counter).values() if isinstance(counter, type) else ():
            func = getattr(value, "__func__", value)
            for _ in range(4):  # the worker's own wrapper (observe_bumps) and what it wraps
                code = getattr(func, "__code__", None)
                if code is not None:
                    codes.add(code)
                func = getattr(func, "__wrapped__", None)
    except BaseException:  # noqa: BLE001 - an odd class only leaves its methods followed
        pass
    return codes


def _count(module: ModuleType, name: str | None) -> int | None:
    if name is None:
        return None
    try:
        n = getattr(module, name).n
    except BaseException:  # noqa: BLE001
        return None
    return n if type(n) is int else None


def _dict_sizes(runner: Any) -> dict[str, int]:
    try:
        attrs = object.__getattribute__(runner, "__dict__")
        return {name: dict.__len__(v) for name, v in list(attrs.items()) if isinstance(v, dict)}
    except BaseException:  # noqa: BLE001
        return {}


class _Tracer:
    def __init__(
        self, module: ModuleType, locator: Locator, runner: Any, counter: str | None, op_code: CodeType | None
    ) -> None:
        self.module = module
        self.op_code = op_code  # the code of the lab's op's __call__: the first op's input is followed
        self.counter = counter
        self.locator = locator
        self.runner = runner
        self.skip = _counter_codes(module, counter)
        self.files: dict[str, str | None] = {}
        self.stack: list[list] = []  # [frame, current line] of the submission's frames being followed
        self.facts: dict[tuple[str, int], list] = {}  # (file, line) -> [function, flags, rb, rbc, cb]
        self.sequences: list[list[tuple[str, int]]] = [[], []]
        self.phase = 0  # 0: capture, 1: replay
        self.last_n = _count(module, counter)
        self.sizes = _dict_sizes(runner)
        self.grown: dict[tuple[str, int, bool], set[str]] = {}  # capture: (file, line, via call) -> dicts grown
        self.first_input: Any = None  # what the first op was handed during the capture
        self.buffer: Any = None
        self.rows: int | None = None
        self.new_input: np.ndarray | None = None
        self.filled = False
        self.key: Any = None
        self.padded: int | None = None
        self.shape: tuple | None = None  # the shape the entry says it was captured for
        self.entry: Any = None
        self.seen_locals: dict[int, dict[str, int]] = {}

    # ------------------------------------------------------------ crediting
    def _fact(self, frame: FrameType, line: int) -> list:
        place = (self.files[frame.f_code.co_filename], line)
        fact = self.facts.get(place)
        if fact is None:
            if len(self.facts) >= tf.MAX_TRACE_LINES:
                return [None, 0, 0, 0, 0]  # beyond the bound: counted nowhere
            name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
            fact = self.facts[place] = [name, 0, 0, 0, 0]
        return fact

    def _credit(self, flag: int, via_call: int, bumps: int = 0) -> None:
        """Credit the running line with ``flag`` (and ``bumps``), its caller with ``via_call``."""
        for level, entry in enumerate(reversed(self.stack[-2:])):
            frame, line = entry
            if line is None:
                continue
            fact = self._fact(frame, line)
            fact[1] |= flag if level == 0 else via_call
            if bumps:
                if self.phase == 0:
                    fact[4] += bumps
                else:
                    fact[2 if level == 0 else 3] += bumps

    def observe(self) -> None:
        """Compare the state with the last event's; credit any change to the running line."""
        if not self.stack:
            return
        n = _count(self.module, self.counter)
        if n is not None and self.last_n is not None and n != self.last_n:
            self._credit(0, 0, n - self.last_n)
        self.last_n = n
        if self.phase == 0:
            sizes = _dict_sizes(self.runner)
            grown = {name for name, size in sizes.items() if size > self.sizes.get(name, 0)}
            if grown:
                for level, (frame, line) in enumerate(reversed(self.stack[-2:])):
                    if line is not None:
                        place = (self.files[frame.f_code.co_filename], line, level == 1)
                        self.grown.setdefault(place, set()).update(grown)
            self.sizes = sizes
            return
        if self.buffer is not None:
            try:
                filled = bool(_array_equal(self.buffer[: self.rows], self.new_input))
            except BaseException:  # noqa: BLE001
                filled = False
            if filled and not self.filled:
                self._credit(tf.FILL, tf.FILL_VIA_CALL)
            self.filled = filled
        frame = self.stack[-1][0]
        try:
            local = dict(frame.f_locals)
        except BaseException:  # noqa: BLE001
            return
        now = {name: id(value) for name, value in local.items()}
        if self.stack[-1][1] is None:  # a call's first line: its arguments were bound by its caller
            self.seen_locals[id(frame)] = now
            return
        before = self.seen_locals.get(id(frame), {})
        for name, value in local.items():
            if before.get(name) != now[name]:
                self._credit_value(value)
        self.seen_locals[id(frame)] = now

    def _credit_value(self, value: Any) -> None:
        if self.entry is not None and value is self.entry:
            self._credit(tf.FETCH, tf.FETCH_VIA_CALL)
        elif self.key is not None and (
            self._is_key(value) or (self.padded is not None and type(value) is int and value == self.padded)
        ):
            self._credit(tf.KEY, tf.KEY_VIA_CALL)

    def _is_key(self, value: Any) -> bool:
        """The cache's key, or the shape the entry was captured for (a key made from it)."""
        for key in (self.key, self.shape):
            if key is None or type(value) is not type(key):
                continue
            try:
                if value is key or bool(value == key):
                    return True
            except BaseException:  # noqa: BLE001
                continue
        return False

    # ------------------------------------------------------------ the trace functions
    def relative(self, filename: str) -> str | None:
        if filename not in self.files:
            self.files[filename] = self.locator.relative(filename)
        return self.files[filename]

    def on_call(self, frame: FrameType, event: str, arg: Any):
        code = frame.f_code
        if code is self.op_code:
            op = frame.f_locals.get("self")
            if self.phase == 0 and self.first_input is None and getattr(op, "position", None) == 0:
                self.first_input = frame.f_locals.get("x")
            return None
        if code in self.skip or self.relative(code.co_filename) is None:
            return None
        self.observe()
        self.stack.append([frame, None])
        return self.on_event

    def on_event(self, frame: FrameType, event: str, arg: Any):
        self.observe()
        if not self.stack or self.stack[-1][0] is not frame:
            return self.on_event
        if event == "line":
            line = frame.f_lineno
            self.stack[-1][1] = line
            fact = self._fact(frame, line)
            fact[1] |= tf.RAN_CAPTURE if self.phase == 0 else tf.RAN_REPLAY
            sequence = self.sequences[self.phase]
            if len(sequence) < MAX_SEQUENCE:
                sequence.append((self.files[frame.f_code.co_filename], line))
        elif event == "return":
            if self.phase == 1 and arg is not None:
                self._credit_value(arg)
            self.stack.pop()
            self.seen_locals.pop(id(frame), None)
        return self.on_event

    # ------------------------------------------------------------ between the two calls
    def after_capture(self, x: np.ndarray) -> str:
        """Find the cache (the dict that gained one entry), its key and entry; name the dict."""
        sizes = _dict_sizes(self.runner)
        grew = [name for name in sizes if sizes[name] >= 1 and any(name in g for g in self.grown.values())]
        name = "graphs" if "graphs" in grew else (grew[0] if grew else "")
        if name:
            cache = object.__getattribute__(self.runner, "__dict__")[name]
            if dict.__len__(cache) == 1:
                self.key = next(iter(dict.keys(cache)))
                self.entry = dict.__getitem__(cache, self.key)
                shape = getattr(self.entry, "shape", None)
                self.shape = shape if type(shape) is tuple and shape and type(shape[0]) is int else None
                if self.shape is not None and x.ndim:
                    self.padded = self.shape[0] if self.shape[0] != x.shape[0] else None
        for (file, line, via_call), names in self.grown.items():
            if name in names:
                fact = self.facts.get((file, line))
                if fact is not None:
                    fact[1] |= tf.STORE_VIA_CALL if via_call else tf.STORE
        return name

    def before_replay(self, x: np.ndarray) -> None:
        self.phase = 1
        self.new_input = x.copy()
        self.rows = None if x.ndim == 0 else x.shape[0]
        if isinstance(self.first_input, np.ndarray):
            self.buffer = self.first_input
            try:
                self.filled = bool(_array_equal(self.buffer[: self.rows], self.new_input))
            except BaseException:  # noqa: BLE001
                self.filled = False
        self.last_n = _count(self.module, self.counter)

    def branch(self) -> None:
        capture, replay = self.sequences
        common = 0
        while common < min(len(capture), len(replay)) and capture[common] == replay[common]:
            common += 1
        if 0 < common and (common < len(capture) or common < len(replay)):
            fact = self.facts.get(capture[common - 1])
            if fact is not None:
                fact[1] |= tf.BRANCH


def run_probe(
    module: ModuleType,
    locator: Locator,
    runner: Any,
    first: np.ndarray,
    second: np.ndarray,
    counter: str | None,
    op_code: CodeType | None = None,
) -> dict:
    """Capture with ``first``, replay with ``second``, under the tracer; the trace's wire form.
    ``counter``: the lab's launch counter entry point (None: none); ``op_code``: the code of the
    lab's op's ``__call__`` (grader.lab.vocabulary; None: the lab has no ops). An exception of the
    submission's propagates (the probe step raised)."""
    tracer = _Tracer(module, locator, runner, counter, op_code)
    previous = sys.gettrace()
    sys.settrace(tracer.on_call)
    try:
        runner(first)
        sys.settrace(None)
        cache = tracer.after_capture(first)
        tracer.before_replay(second)
        before = _count(module, counter)
        tracer.stack.clear()
        sys.settrace(tracer.on_call)
        runner(second)
        sys.settrace(None)
        after = _count(module, counter)
    finally:
        sys.settrace(previous)
    tracer.branch()
    lines = [
        [file, line, fact[0], fact[1], fact[2], fact[3], fact[4]]
        for (file, line), fact in sorted(tracer.facts.items())
        if fact[0] is not None
    ]
    launches = after - before if before is not None and after is not None else None
    return tf.wire(lines, launches, tracer.buffer is not None, cache)
