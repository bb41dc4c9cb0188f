"""A frame counts only for the case being run, in both isolation modes (issue 25, point 6).

The reproduction: while case i runs, the submission writes to every descriptor it has (in
``--isolation module`` the worker's result pipe is one of them) a whole, well-formed answer
for case i and then one for case i+1. Before the fix the grader took the second as case
i+1's result. Now a case's status frame must carry the token the grader issues for that case
once the case before it has ended, and the size of the frames before it: frames written
earlier never count for a later case (case i, whose frames were forged, is an error)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.running import run_alone
from support.shipped import shipped_suite

from grader.run.runner import RunSettings

SOLUTION = Path(__file__).parent / "support" / "solutions" / "split_helpers"
FIRST, NEXT = "launch-counter-basics/reset-sets-zero", "launch-counter-basics/bump-default-is-one"

CASE_UID = """
import sys


def _case_uid():
    frame = sys._getframe()
    while frame is not None:  # the worker's run_case_here / run_case holds the case's id as `uid`
        found = frame.f_locals.get("uid")
        if isinstance(found, str) and "/" in found:
            return found
        frame = frame.f_back
    return None
"""

FORGER = (
    CASE_UID
    + """

def _forge_next_case():
    import os
    from grader import framing
    if _case_uid() != FIRST:
        return
    def answer(case, values):
        steps = [{"index": i, "outcome": "returned", "value": v, "error": None, "launches": None, "witness": [],
                  "input_address": None, "graphs": None, "note": ""} for i, v in enumerate(values)]
        body = framing.observation_frame(case, steps, [])
        status = framing.control_frame(framing.CaseStatus(case=case, exitcode=0, signal=None, output_end=0))
        return body + status
    stream = answer(FIRST, [None, None, 0]) + answer(NEXT, [None, None, 999])
    for fd in range(3, 256):
        try:
            os.write(fd, stream)
        except OSError:
            pass
"""
)


def forging_submission(tmp_path: Path) -> Path:
    sub = tmp_path / "forger"
    sub.mkdir()
    (sub / "_helpers.py").write_text((SOLUTION / "_helpers.py").read_text())
    source = (SOLUTION / "cudagraph.py").read_text()
    anchor = "    @classmethod\n    def reset(cls):\n"
    assert source.count(anchor) == 1
    source = source.replace(anchor, anchor + "        _forge_next_case()\n")
    (sub / "cudagraph.py").write_text(f"FIRST, NEXT = {FIRST!r}, {NEXT!r}\n" + FORGER + source)
    return sub


@pytest.mark.parametrize("isolation", ["module", "process"])
def test_a_frame_sent_during_one_case_never_counts_for_the_next(tmp_path, isolation):
    cases = tuple(c for s in shipped_suite().suite.specs for c in s.cases if c.uid in (FIRST, NEXT))
    assert [c.uid for c in cases] == [FIRST, NEXT]
    sub = forging_submission(tmp_path)
    for ahead in (None, (True, False)):  # the next case's message queued early, or not
        run = run_alone(sub, cases, RunSettings(isolation=isolation), ahead)
        first, second = run.cases
        assert second.status == "observed", (second.status, second.message)
        values = [s.value for s in second.observation.steps]
        assert 999 not in values and values[-1] == 1, values  # the honest run's, not the forged one
        # the forged frames are an error for the case that wrote them: in module mode they reach
        # the grader and carry no token; in process mode they only spoil the case's own result pipe
        assert first.status == "error", first.message
        if isolation == "module":
            assert "not this case's status" in first.message, first.message


def _collect(case, stream: bytes, token: str):
    """What the grader makes of ``stream`` as case ``case``'s frames (grader.run.runner._run_case)."""
    import os
    import time
    import types

    from grader.run import runner
    from grader.run.pipes import Reader

    r, w = os.pipe()
    try:
        os.write(w, stream)
        worker = types.SimpleNamespace(reader=Reader(r), exitcode=None, stop=lambda *a: None)
        deadline = time.monotonic() + 60
        return runner._run_case(worker, case, deadline, RunSettings(), deadline, 0, token)[0]
    finally:
        os.close(r)
        os.close(w)


def test_a_status_frame_must_describe_the_frames_before_it():
    """A stray observation frame placed before a genuine status frame (with the right token)
    does not count: the status says how many bytes its worker wrote for the case."""
    from grader import framing

    case = next(c for s in shipped_suite().suite.specs for c in s.cases if c.uid == FIRST)
    steps = [{"index": i, "outcome": "returned", "value": v, "error": None, "launches": None, "witness": [],
              "input_address": None, "graphs": None, "note": ""} for i, v in enumerate([None, None, 0])]  # fmt: skip
    frame = framing.observation_frame(FIRST, steps, [])

    def status(written: int, token: str = "t0") -> bytes:
        return framing.control_frame(
            framing.CaseStatus(case=FIRST, exitcode=0, signal=None, output_end=0, token=token, written=written)
        )

    assert _collect(case, frame + status(len(frame)), "t0").status == "observed"  # the control
    stray = _collect(case, frame + status(0), "t0")
    assert stray.status == "error" and stray.observation is None
    assert "did not write for this case" in stray.message, stray.message
    wrong_token = _collect(case, frame + status(len(frame), "t1"), "t0")
    assert wrong_token.status == "error" and "not this case's status" in wrong_token.message, wrong_token.message


SMUGGLER = (
    CASE_UID
    + """
from grader import framing as _framing
_uid = _case_uid()
if _uid == NEXT:
    raise RuntimeError("this case's module does not import: its worker sends a status, no frame")


def _smuggle_next():
    _real = _framing.control_frame

    def _smuggle(message, _real=_real):
        steps = [{"index": i, "outcome": "returned", "value": v, "error": None, "launches": None, "witness": [],
                  "input_address": None, "graphs": None, "note": ""} for i, v in enumerate([None, None, 999])]
        return _real(message) + _framing.observation_frame(NEXT, steps, [])

    _framing.control_frame = _smuggle
"""
)


def test_a_frame_smuggled_after_a_genuine_status_never_counts(tmp_path):
    """Module isolation: case i (from a method it calls) patches the worker so that its genuine status frame is followed
    by an answer for case i+1 (no status); case i+1 then fails to import, so its worker sends a
    genuine status with its token and no frame. The smuggled frame lies between the two
    statuses, but the status says its worker wrote nothing for the case: an error, never 999."""
    cases = tuple(c for s in shipped_suite().suite.specs for c in s.cases if c.uid in (FIRST, NEXT))
    sub = tmp_path / "smuggler"
    sub.mkdir()
    (sub / "_helpers.py").write_text((SOLUTION / "_helpers.py").read_text())
    solution = (SOLUTION / "cudagraph.py").read_text()
    anchor = "    @classmethod\n    def reset(cls):\n"
    solution = solution.replace(anchor, anchor + "        if _uid is None:\n            _smuggle_next()\n")
    source = f"FIRST, NEXT = {FIRST!r}, {NEXT!r}\n" + SMUGGLER + solution
    (sub / "cudagraph.py").write_text(source)
    run = run_alone(sub, cases, RunSettings(isolation="module"))
    first, second = run.cases
    assert first.status == "observed", first.message  # its own result is genuine
    assert second.observation is None and second.status == "error", (second.status, second.message)
    assert "did not write for this case" in second.message, second.message


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
