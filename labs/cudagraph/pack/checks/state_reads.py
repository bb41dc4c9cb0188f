"""``num_captured`` and ``num_graphs``: a runner's count of captured graphs, read by the worker
right after a step (or at the end), as the engine's ``attribute`` check reads any member."""

from __future__ import annotations

from dataclasses import dataclass

from grader.suite.checks.reads import StateRead


@dataclass(frozen=True)
class NumCapturedCheck(StateRead):
    kind = "num_captured"
    order = 50
    lab_owned = True  # the CUDA-graph lab's kind (lab.yaml: checks.modules), not the engine's


@dataclass(frozen=True)
class NumGraphsCheck(StateRead):
    kind = "num_graphs"
    order = 60
    lab_owned = True
