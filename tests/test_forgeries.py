"""Integrity round 4 (issue 31, "Why" 2), end to end: the forgeries that hid the fresh-buffer-on-replay
bug from every rule, each graded in both isolation modes beside the bug unforged.

The bug: each replay copies the input into a new buffer instead of the static one it captured, so
the first op is handed a new address every time (seven cases check that it is not). Unguarded, each
forgery below scored 100 with no flag, where the bug unforged scores about 90:

* ``h60_lying_address``: an ndarray subclass whose ``__array_interface__`` reports the static buffer;
* ``h61_patch_through_type_alias``: the op's class patched through ``kind = type`` and put back
  before the case ends;
* ``h62_computed_log_name``: the call log rewritten through ``getattr(op, "_wit" + "ness")``;
* ``h63_encoded_exec``: base64 + zlib code in notes.txt, run through ``getattr(builtins, "ex" + "ec")``;
* and ``h53_forged_op_class`` (issue 25's class patch), which must still be caught.

Each must score no more than the bug unforged, case by case, in both modes; those that patch the
op's class are caught by the op's own call (``GraderObjectChanged``); and each forgery the scan can
read is flagged for staff. No assertion depends on timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hostile"))
from materialize import _submission, materialize  # noqa: E402

FORGERIES = (
    "h53_forged_op_class",
    "h60_lying_address",
    "h61_patch_through_type_alias",
    "h62_computed_log_name",
    "h63_encoded_exec",
)
# The bug the forgeries hide, unforged: the replay branch of each of them, with no forgery.
FRESH_BUFFER = """import numpy as np

import _honest_core
from _honest_core import *  # noqa: F401,F403


class GraphRunner(_honest_core.GraphRunner):
    def __call__(self, x):
        x = np.asarray(x)
        key = self._key(x)
        entry = self.graphs.get(key) if key is not None else None
        if entry is None:
            return super().__call__(x)
        self._fill(entry.static_input, x)
        fresh = np.zeros_like(entry.static_input)  # the bug: a new buffer on every replay
        self._fill(fresh, x)
        y = fresh
        for op in self.ops:
            y = op(y)
        _honest_core.LaunchCounter.bump(1)
        entry.output = y
        return self._rows(y, x)


class PiecewiseGraphRunner(_honest_core.PiecewiseGraphRunner):
    def __init__(self, ops, is_capturable, capture_sizes=None):
        super().__init__(ops, is_capturable, capture_sizes)
        self.runners = [GraphRunner(seg, capture_sizes) if flag else None for flag, seg in self.segments]
"""
# What the scan must find in each forgery's own files (a forgery it cannot read, h60, is caught by the
# op alone); rules, not spellings.
FLAGGED = {
    "h53_forged_op_class": {"patch-class", "grader-state"},
    "h60_lying_address": set(),
    "h61_patch_through_type_alias": {"patch-class", "grader-state"},
    "h62_computed_log_name": {"grader-state"},
    "h63_encoded_exec": {"dynamic-code", "builtins-module", "encoded-code"},
}
CLASS_PATCHED = ("h53_forged_op_class", "h61_patch_through_type_alias", "h63_encoded_exec")
GRADE_TIMEOUT_S = 600


@pytest.fixture(scope="module", params=("module", "process"))
def graded(request, tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp(f"forgeries-{request.param}")
    subs = materialize(tmp / "subs", list(FORGERIES))
    subs["fresh_buffer"] = _submission(tmp / "subs" / "fresh_buffer", FRESH_BUFFER)
    out = tmp / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    done = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "grade", *(str(p) for p in subs.values())]
        + ["--out", str(out), "--jobs", "2", "--no-cache", "--no-similarity", "--timeout", "5", "--budget", "120"]
        + ["--isolation", request.param],
        cwd=tmp,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=GRADE_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {n: json.loads((out / n / "report.json").read_text()) for n in subs}


def _passed(report: dict) -> set[tuple[str, str]]:
    return {(c["spec"], c["case"]) for c in report["cases"] if c["status"] == "passed"}


def test_the_bug_unforged_costs_the_cases_that_check_the_static_buffer(graded):
    honest, bug = graded["honest"], graded["fresh_buffer"]
    assert honest["score"] == honest["max_score"]
    failed = _passed(honest) - _passed(bug)
    # and the notebook answers: the honest core's cited lines, which the bug's own runner never runs on replay
    assert failed and all(s.startswith(("static-buffer", "piecewise", "notebook-answers")) for s, _ in failed), failed
    assert bug["score"] < honest["score"]


@pytest.mark.parametrize("name", FORGERIES)
def test_a_forgery_scores_no_more_than_the_bug_it_hides(graded, name):
    report, bug = graded[name], graded["fresh_buffer"]
    assert _passed(report) <= _passed(bug), sorted(_passed(report) - _passed(bug))
    assert report["score"] <= bug["score"] < report["max_score"]


@pytest.mark.parametrize("name", FORGERIES)
def test_a_forgery_the_scan_can_read_is_flagged(graded, name):
    rules = {f["rule"] for f in graded[name]["flags"] if f["file"] != "_hostile_kit.py"}
    assert FLAGGED[name] <= rules, graded[name]["flags"]
    assert not {f["rule"] for f in graded["honest"]["flags"] if f["file"] != "_hostile_kit.py"}
    assert not {f["rule"] for f in graded["fresh_buffer"]["flags"] if f["file"] != "_hostile_kit.py"}


@pytest.mark.parametrize("name", CLASS_PATCHED)
def test_a_class_patch_is_seen_by_the_op_s_own_call(graded, name):
    """h61 puts the class back before its case ends, so only a check made while an op runs sees it."""
    caught = [c for c in graded[name]["cases"] if "GraderObjectChanged" in c["message"] and not c["redacted"]]
    assert caught and all(c["status"] != "passed" for c in caught)
    assert "GraderOp.__call__" in caught[0]["message"]


def test_no_name_reaches_the_call_log(graded):
    text = graded["h62_computed_log_name"]["output_tail"] + "".join(
        c["output_tail"] for c in graded["h62_computed_log_name"]["cases"]
    )
    assert "[hostile] call log: nothing" in text and "call log found" not in text
