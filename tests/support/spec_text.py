"""One case loaded by the real loader from a few lines of YAML, for tests that build
observations by hand (the judge's, the protocol's and the interpreter's)."""

from __future__ import annotations

from grader.suite.loader import load_spec_text

HEADER = """\
format: 1
specs:
  - id: judged
    title: Judged spec
    tag: static-buffer
    points: 1
    visibility: visible
    explanation: Explains.
    hint: Hints.
    cases:
      - id: the-case
        description: A case for the judge.
        steps:
"""

# Steps 0..2: build a runner, capture (first), replay (second).
RUNNER_STEPS = """\
          - build: GraphRunner
            as: runner
            args: [{ops: [relu, {add: 1.5}, tanh]}]
          - call: runner
            as: first
            args: [{array: {shape: [4, 8], dtype: float32, seed: 1}}]
          - call: runner
            as: second
            args: [{array: {shape: [4, 8], dtype: float32, seed: 2}}]
"""

# Step 0: fuse five ops, two elementwise runs around softmax.
FUSE_STEPS = """\
          - call: fuse_elementwise
            as: fused
            args: [{ops: [{add: 1.0}, {mul: 2.0}, relu, softmax, tanh]}]
"""
FUSED_CHECK = "fused_ops: {step: fused}"


def load_case(steps: str, checks: str):
    """A Case and its oracle calls, loaded by the real loader from YAML text."""
    text = HEADER + steps + "        checks:\n" + "".join(f"          - {c}\n" for c in checks.strip().splitlines())
    oracles: dict = {}
    spec_file = load_spec_text(text, "judge.yaml", oracles)
    (case,) = spec_file.specs[0].cases
    return case, oracles[case.uid]
