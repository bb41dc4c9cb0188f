"""Reference solution of the decode-step lab: graph capture for an inference decode loop.

An inference engine's decode step has a static shape (a fixed batch, one new token per
sequence), so the engine can capture it once as a CUDA graph and replay that graph on every
later step instead of launching each kernel from the CPU. Two pieces make that safe:

- ``InferenceGraphCapture``, a small state machine the loop asks before each step what to do:
  warm up (run normally), capture, or replay.
- ``DecodeLoop``, the decode loop wired to it: it runs each step on the engine it is given in
  the mode the machine names, records a capture only once it succeeded, falls back to normal
  execution (and turns graphs off for good) when a capture fails or the batch shape changes,
  and advances the machine after every step.

The engine is handed in; this module never builds one. It offers ``run(batch_size, seq_step)``
(a normal step, returns the step's tokens), ``capture(batch_size, seq_step)`` (the step run
while recording it as a graph, returns an object with ``graph_id`` and ``tokens``) and
``replay(graph_id, batch_size, seq_step)`` (the captured graph launched again, returns the
step's tokens). Each raises its own error when the step fails.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class StepMode(enum.Enum):
    """What the decode loop should do on the current step."""

    WARMUP = "warmup"  # run the step normally
    CAPTURE = "capture"  # run the step while capturing it as a graph
    REPLAY = "replay"  # launch the captured graph instead of the step's kernels


class InferenceGraphCapture:
    """Decode-step state machine: warm up, capture once, then replay.

    The loop calls ``step_mode()`` before each step and ``advance()`` after it:

    - ``WARMUP`` while graphs are disabled or ``step_count < warmup_steps``;
    - ``CAPTURE`` when ``step_count == warmup_steps`` and no capture was attempted yet;
    - ``REPLAY`` otherwise.

    ``warmup_steps`` below 1 is raised to 1, so the kernels always run once before a capture.
    Graphs are off unless the machine is built with ``enabled=True``; ``disable()`` turns them
    off for good.
    """

    def __init__(self, warmup_steps: int, enabled: bool = False) -> None:
        self.warmup_steps = max(1, warmup_steps)
        self.graph_id: int | None = None  # the captured graph, once recorded
        self.capture_attempted = False  # True once a capture was recorded (or given up)
        self._enabled = enabled
        self._step_count = 0
        self._captured_shape: tuple[int, int] | None = None  # (batch_size, seq_step)

    @property
    def step_count(self) -> int:
        """How many decode steps have run (warm-up, capture and replay alike)."""
        return self._step_count

    @property
    def is_captured(self) -> bool:
        """True once a graph was recorded; a graph id of 0 is a graph too."""
        return self.graph_id is not None

    def step_mode(self) -> StepMode:
        """What to do on the current step; reads the state, changes nothing."""
        if not self._enabled or self._step_count < self.warmup_steps:
            return StepMode.WARMUP
        if self._step_count == self.warmup_steps and not self.capture_attempted:
            return StepMode.CAPTURE
        return StepMode.REPLAY

    def advance(self) -> None:
        """Count one more step; called once after every step, whatever its mode."""
        self._step_count += 1

    def record_capture(self, graph_id: int, batch_size: int, seq_step: int) -> None:
        """Store a successful capture: the graph and the shape it was captured with."""
        self.graph_id = graph_id
        self.capture_attempted = True
        self._captured_shape = (batch_size, seq_step)

    def check_static_shape(self, batch_size: int, seq_step: int) -> bool:
        """True only if a capture was recorded with exactly this batch size and seq_step."""
        return self._captured_shape == (batch_size, seq_step)

    def disable(self) -> None:
        """Turn graphs off for the rest of the session: every later step is WARMUP."""
        self._enabled = False


@dataclass(frozen=True)
class DecodeConfig:
    """The decode loop's settings: graphs are opt-in, and warm up for 3 steps by default."""

    enable_decode_graphs: bool = False
    graph_warmup_steps: int = 3


class DecodeLoop:
    """Runs decode steps on ``engine``, capturing and replaying the step as the machine says.

    ``graph_capture`` is the loop's state machine, built once from ``config``.
    """

    def __init__(self, engine, config: DecodeConfig | None = None) -> None:
        self.engine = engine
        self.config = config if config is not None else DecodeConfig()
        self.graph_capture = InferenceGraphCapture(
            self.config.graph_warmup_steps, enabled=self.config.enable_decode_graphs
        )

    def step(self, batch_size: int, seq_step: int) -> list[int]:
        """Run one decode step and return its tokens; the machine advances even if it fails."""
        try:
            return self._run_step(batch_size, seq_step)
        finally:
            self.graph_capture.advance()

    def _run_step(self, batch_size: int, seq_step: int) -> list[int]:
        machine = self.graph_capture
        mode = machine.step_mode()  # asked before the step, never after
        if mode is StepMode.CAPTURE:
            try:
                captured = self.engine.capture(batch_size, seq_step)
            except Exception:
                machine.disable()  # a failed capture: no graph, and no retry
                return self.engine.run(batch_size, seq_step)
            machine.record_capture(captured.graph_id, batch_size, seq_step)
            return captured.tokens
        if mode is StepMode.REPLAY:
            if not (machine.is_captured and machine.check_static_shape(batch_size, seq_step)):
                machine.disable()  # the batch changed shape: this graph no longer fits
                return self.engine.run(batch_size, seq_step)
            try:
                return self.engine.replay(machine.graph_id, batch_size, seq_step)
            except Exception:
                machine.disable()  # a graph that fails to replay is not tried again
                return self.engine.run(batch_size, seq_step)
        return self.engine.run(batch_size, seq_step)
