"""The lab handout's steps 1-4, done literally and nothing more (tests/test_handout_literal.py).

Written from the handout's text alone (../shared/seeds/004, "The build, in order"), not from
docs/contract.md: a namedtuple GraphEntry, GraphRunner(ops) with no stretch arguments, a replay
that copies x into the static buffer, recomputes from it, bumps once and returns, without
writing entry.output (the handout never asks it). No stretch part is written.
"""

from collections import namedtuple

import numpy as np


class LaunchCounter:
    n = 0

    @classmethod
    def reset(cls):
        cls.n = 0

    @classmethod
    def bump(cls, k=1):
        cls.n += k


def run_eager(ops, x):
    for op in ops:
        x = op(x)
        LaunchCounter.bump(1)
    return x


GraphEntry = namedtuple("GraphEntry", ["shape", "static_input", "output", "num_ops"])


class GraphRunner:
    def __init__(self, ops):
        self.ops = list(ops)
        self.graphs = {}

    @property
    def num_captured(self):
        return len(self.graphs)

    def __call__(self, x):
        key = x.shape
        if key not in self.graphs:
            static_input = x.copy()
            output = run_eager(self.ops, static_input)
            self.graphs[key] = GraphEntry(key, static_input, output, len(self.ops))
            return output
        entry = self.graphs[key]
        np.copyto(entry.static_input, x)
        y = entry.static_input
        for op in self.ops:
            y = op(y)
        LaunchCounter.bump(1)
        return y


class PiecewiseGraphRunner:
    def __init__(self, ops, is_capturable):
        self.segments = []
        for i, op in enumerate(ops):
            capturable = is_capturable(i)
            if self.segments and self.segments[-1][0] == capturable:
                self.segments[-1][1].append(op)
            else:
                self.segments.append((capturable, [op]))
        self.runs = [GraphRunner(seg) if capturable else seg for capturable, seg in self.segments]

    @property
    def num_graphs(self):
        return sum(1 for capturable, _ in self.segments if capturable)

    def __call__(self, x):
        for run in self.runs:
            x = run(x) if isinstance(run, GraphRunner) else run_eager(run, x)
        return x
