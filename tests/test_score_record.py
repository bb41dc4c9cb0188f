"""Every deterministic test submission of the CUDA-graph lab scores exactly as recorded
(tests/support/score_record.py): a refactor of the engine (issue 32's lab packs) moves no score.
A change that moves one on purpose records again (``python tests/support/score_record.py write``)
and says in its commit which issue asks for the difference."""

from __future__ import annotations

import json

import pytest
from support import score_record  # never tests/support on sys.path: its labs.py would shadow labs/


@pytest.mark.slow
def test_every_recorded_submission_scores_as_recorded():
    recorded = json.loads(score_record.RECORD.read_text(encoding="utf-8"))
    assert set(recorded) == set(score_record.subjects()), "the subjects changed: record again"
    moved = score_record.differences(recorded, score_record.grade_all())
    assert not moved, "\n".join(moved)


def test_differences_names_each_moved_case():
    before = {"a": {"score": 1.0, "max_score": 2.0, "problem": False, "cases": {"s/c": ["passed", 1.0]}}}
    after = {"a": {"score": 0.0, "max_score": 2.0, "problem": False, "cases": {"s/c": ["failed", 0.0]}}}
    assert score_record.differences(before, before) == []
    assert score_record.differences(before, after) == [
        "a: score 1.0/2.0 -> 0.0/2.0",
        "a: s/c: ['passed', 1.0] -> ['failed', 0.0]",
    ]
