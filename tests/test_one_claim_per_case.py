"""One claim per case (issue 34, point 4): a bug costs points on its own behaviour and on the
behaviours the handout builds on it, and at most 3 points anywhere else.

Every mutant of reference/mutants/ (each breaks one behaviour's rule, its TAG) is graded on every
case of the shipped suite by benchmarks/claims.py, which prints the same table."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from claims import mutant_costs  # noqa: E402

LIMIT = 3.0


@pytest.mark.slow
def test_no_mutant_costs_more_than_3_points_outside_its_own_behaviour():
    rows = mutant_costs()
    assert len(rows) >= 40
    for name, tag, per_tag, _outside in rows:
        assert tag in per_tag, f"{name} costs its own behaviour ({tag}) nothing: {per_tag}"
    over = [
        f"{name} ({tag}): {outside:g} points outside, {per_tag}"
        for name, tag, per_tag, outside in rows
        if outside > LIMIT
    ]
    assert not over, "\n".join(over)
