"""The fake inference engine the decode-step lab hands to student code.

A student's ``DecodeLoop`` is given one of these as its ``engine``. It stands in for the
model's decode step and for the CUDA-graph manager at once, with no GPU and no arrays: each
call returns the step's tokens (one made-up token id per sequence of the batch) and records
itself in a :class:`CallLog` that the grader holds, so a spec can say which calls a step
made. It behaves as a real engine does where that matters to the loop:

- ``capture`` hands out graph ids from ``first_graph_id`` on (0 by default: a graph id of 0 is
  a real graph, as ``CudaGraphManager`` ids are);
- ``replay`` of a graph id it never handed out, or with a shape other than the one captured,
  raises :class:`GraphReplayError` (a real graph replayed on another shape computes garbage);
- it can be told to fail a capture (:class:`GraphCaptureError`), given normal runs
  (:class:`EngineError`) or given replays (:class:`GraphReplayError`).

Nothing here imports the grader; the engine adapts to these plain classes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

# A call as the log keeps it: ("run", batch_size, seq_step), ("capture", batch_size, seq_step)
# or ("replay", graph_id, batch_size, seq_step). Plain tuples of str and int, so the worker
# can send them as they are.
Call = tuple


class EngineError(RuntimeError):
    """A decode step failed while running normally (the engine was told to fail that run)."""


class GraphCaptureError(RuntimeError):
    """Capturing the decode step as a graph failed (the engine was told to fail captures)."""


class GraphReplayError(RuntimeError):
    """A graph could not be replayed: unknown graph id, another shape, or told to fail."""


@dataclass(frozen=True)
class CaptureResult:
    """What a successful ``capture`` returns: the new graph's id and the step's tokens."""

    graph_id: int
    tokens: list[int]


@dataclass(frozen=True)
class EngineSetup:
    """How a fake engine behaves: which calls fail and the first graph id it hands out.

    ``fail_runs`` and ``fail_replays`` are 0-based indices among the engine's own ``run`` (or
    ``replay``) calls: ``fail_runs=(1,)`` fails the second normal run, whichever step makes it.
    """

    fail_capture: bool = False
    fail_runs: tuple[int, ...] = ()
    fail_replays: tuple[int, ...] = ()
    first_graph_id: int = 0


@dataclass
class CallLog:
    """Every call made on one engine, in order; the grader keeps it, not the engine's caller.
    :meth:`mark` and :meth:`since` cut it into the calls one step made.

    ``site``, when given, is asked for the submission's line that made each call (the worker's
    locator, as for the ops' witness log; -1 when unknown); ``sites[i]`` is that of ``calls[i]``,
    so a verdict can name the student's own line."""

    calls: list[Call] = field(default_factory=list)
    sites: list[int] = field(default_factory=list)
    site: Callable[[], int] | None = None

    def record(self, call: Call) -> None:
        """Append one call, and where it came from."""
        self.calls.append(call)
        self.sites.append(self.site() if self.site is not None else -1)

    def mark(self) -> int:
        """A position in the log: the calls made from here on are ``since(mark)``."""
        return len(self.calls)

    def since(self, mark: int) -> list[Call]:
        """The calls made after ``mark`` was taken."""
        return list(self.calls[mark:])


def step_tokens(batch_size: int, seq_step: int) -> list[int]:
    """The tokens a decode step of this shape produces: ``1000 * seq_step + row`` per row.

    The same for a normal run, a capture and a replay of the same shape, as a correct graph
    computes exactly what the kernels it recorded compute."""
    return [1000 * seq_step + row for row in range(batch_size)]


class FakeDecodeEngine:
    """A decode step and a graph manager, without a GPU. See the module docstring."""

    __slots__ = ("_setup", "_log", "_runs", "_replays", "_graphs", "_next_graph_id")

    def __init__(self, setup: EngineSetup, log: CallLog) -> None:
        self._setup = setup
        self._log = log
        self._runs = 0
        self._replays = 0
        self._graphs: dict[int, tuple[int, int]] = {}  # graph id -> (batch_size, seq_step)
        self._next_graph_id = setup.first_graph_id

    def run(self, batch_size: int, seq_step: int) -> list[int]:
        """Run one decode step normally, one kernel launch per layer; return its tokens."""
        self._log.record(("run", batch_size, seq_step))
        index, self._runs = self._runs, self._runs + 1
        if index in self._setup.fail_runs:
            raise EngineError(f"decode step failed (run #{index}, batch_size={batch_size}, seq_step={seq_step})")
        return step_tokens(batch_size, seq_step)

    def capture(self, batch_size: int, seq_step: int) -> CaptureResult:
        """Run one decode step while capturing it as a graph; return the graph's id and tokens."""
        self._log.record(("capture", batch_size, seq_step))
        if self._setup.fail_capture:
            raise GraphCaptureError(f"graph capture failed (batch_size={batch_size}, seq_step={seq_step})")
        graph_id, self._next_graph_id = self._next_graph_id, self._next_graph_id + 1
        self._graphs[graph_id] = (batch_size, seq_step)
        return CaptureResult(graph_id=graph_id, tokens=step_tokens(batch_size, seq_step))

    def replay(self, graph_id: int, batch_size: int, seq_step: int) -> list[int]:
        """Launch a captured graph once for this step; return the step's tokens."""
        self._log.record(("replay", graph_id, batch_size, seq_step))
        index, self._replays = self._replays, self._replays + 1
        if graph_id not in self._graphs:
            raise GraphReplayError(f"no graph has id {graph_id!r}")
        if self._graphs[graph_id] != (batch_size, seq_step):
            captured_batch, captured_step = self._graphs[graph_id]
            raise GraphReplayError(
                f"graph {graph_id} was captured for batch_size={captured_batch}, seq_step={captured_step}, "
                f"not batch_size={batch_size}, seq_step={seq_step}"
            )
        if index in self._setup.fail_replays:
            raise GraphReplayError(f"graph {graph_id} failed to replay (replay #{index})")
        return step_tokens(batch_size, seq_step)


def engine_setup(
    fail_capture: bool = False,
    fail_runs: Iterable[int] = (),
    fail_replays: Iterable[int] = (),
    first_graph_id: int = 0,
) -> EngineSetup:
    """An :class:`EngineSetup` from a spec's keyword arguments, each checked; a wrong one is a
    ``ValueError`` naming the argument and what it must be (the loader words it as file:line)."""
    if not isinstance(fail_capture, bool):
        raise ValueError(f"fail_capture: expected true or false, got {fail_capture!r}")
    runs = _indices("fail_runs", fail_runs)
    replays = _indices("fail_replays", fail_replays)
    if isinstance(first_graph_id, bool) or not isinstance(first_graph_id, int) or first_graph_id < 0:
        raise ValueError(f"first_graph_id: expected an integer >= 0, got {first_graph_id!r}")
    return EngineSetup(fail_capture, runs, replays, first_graph_id)


def _indices(name: str, values: Iterable[int]) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ValueError(f"{name}: expected a list of integers >= 0, got {values!r}")
    out = tuple(values)
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in out):
        raise ValueError(f"{name}: expected a list of integers >= 0, got {list(out)!r}")
    return out
