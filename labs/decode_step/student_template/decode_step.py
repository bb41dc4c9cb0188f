"""Decode-step lab: CUDA-graph capture for an inference engine's decode loop.

Replace every ``raise NotImplementedError`` with your code. Keep the names and signatures
exactly as they are: the grader imports them. ``docs/contract.md`` holds every rule the
grader checks; each rule below is marked [plan] (the engine's plan you are translating) or
[graphgrade] (graphgrade's stricter reading where the plan is silent, graded on its own).

The engine your ``DecodeLoop`` is given is not yours to write: the grader hands you one
(tests can use any object with the same three methods). It offers

- ``engine.run(batch_size, seq_step)``: run the decode step normally; returns its tokens.
- ``engine.capture(batch_size, seq_step)``: run the step while capturing it as a graph;
  returns an object with ``.graph_id`` (an int, maybe 0) and ``.tokens``.
- ``engine.replay(graph_id, batch_size, seq_step)``: launch a captured graph for this step;
  returns its tokens.

Each may raise an exception when the step fails.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class StepMode(enum.Enum):
    """What the decode loop should do on the current step. Provided for you."""

    WARMUP = "warmup"
    CAPTURE = "capture"
    REPLAY = "replay"


class InferenceGraphCapture:
    """The decode-step state machine: warm up, capture once, then replay.

    Before each decode step the loop asks ``step_mode()``; after it, the loop calls
    ``advance()``.

    Rules:
    - ``warmup_steps`` below 1 is raised to 1: kernels run at least once before a
      capture (0 [plan]; -1, -5, ... [graphgrade]). Values of 1 or more are kept.
    - Graphs are off unless built with ``enabled=True`` [plan]; ``disable()`` turns them
      off for good [plan].
    - ``step_mode()`` is ``WARMUP`` while disabled or while ``step_count < warmup_steps``;
      ``CAPTURE`` when ``step_count == warmup_steps`` and no capture was attempted yet;
      ``REPLAY`` otherwise [plan].
    - ``graph_id`` (``None`` at first) and ``capture_attempted`` (``False`` at first) are
      plain attributes; ``step_count`` and ``is_captured`` are read-only properties.
    """

    def __init__(self, warmup_steps: int, enabled: bool = False) -> None:
        """Set up a machine at step 0 with nothing captured (the plan's ``new`` and
        ``enabled`` in one call)."""
        raise NotImplementedError

    @property
    def step_count(self) -> int:
        """How many steps ``advance()`` has counted."""
        raise NotImplementedError

    @property
    def is_captured(self) -> bool:
        """True once a graph was recorded (a graph id of 0 is a graph)."""
        raise NotImplementedError

    def step_mode(self) -> StepMode:
        """WARMUP, CAPTURE or REPLAY for the current step (see the rules); changes nothing."""
        raise NotImplementedError

    def advance(self) -> None:
        """Count one finished step, whatever its mode."""
        raise NotImplementedError

    def record_capture(self, graph_id: int, batch_size: int, seq_step: int) -> None:
        """Store a successful capture: the graph id and the shape it was captured with.
        Also marks the capture attempted, so it never happens again."""
        raise NotImplementedError

    def check_static_shape(self, batch_size: int, seq_step: int) -> bool:
        """True only if a capture was recorded with exactly this batch size and seq_step."""
        raise NotImplementedError

    def disable(self) -> None:
        """Turn graphs off for the rest of the session."""
        raise NotImplementedError


@dataclass(frozen=True)
class DecodeConfig:
    """The decode loop's settings [plan]: ``enable_decode_graphs`` (default ``False``) and
    ``graph_warmup_steps`` (default ``3``). Declare the two fields with their defaults,
    replacing ``__post_init__`` below."""

    def __post_init__(self) -> None:
        raise NotImplementedError


class DecodeLoop:
    """The decode loop, wired to the state machine.

    ``DecodeLoop(engine, config=None)`` keeps ``engine`` and builds ``graph_capture``, its
    ``InferenceGraphCapture``, once, from ``config`` (``DecodeConfig()`` when none is given).
    """

    def __init__(self, engine, config: DecodeConfig | None = None) -> None:
        """Keep the engine; build ``self.graph_capture`` from the configuration."""
        raise NotImplementedError

    def step(self, batch_size: int, seq_step: int) -> list[int]:
        """Run one decode step and return its tokens.

        Ask ``graph_capture.step_mode()`` before the step [plan]:
        - WARMUP: ``engine.run`` the step.
        - CAPTURE: ``engine.capture`` the step; if it succeeded, ``record_capture`` the
          graph id it returned with this step's shape [plan]; if it failed, ``disable()``
          and run the step normally [plan].
        - REPLAY: if nothing is captured or ``check_static_shape`` says the shape changed,
          ``disable()`` and run the step normally [plan]. Otherwise run it normally (the
          core) or, for the stretch part, ``engine.replay`` the graph; a replay that fails
          is disabled and run normally [graphgrade].

        ``advance()`` after every step, even one whose engine call failed; such a
        failure then leaves ``step`` as the engine's exception [graphgrade].
        """
        raise NotImplementedError
