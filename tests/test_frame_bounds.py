"""What one submission's frames can cost the grader (issue 25, point 5): raw frames are not held
past decoding unless the cache keeps them, a frame's unused bytes (a blob no value uses, a
header that is mostly padding) are refused, and a submission's results are bounded in all.
(What they cost in CPU and memory is measured in benchmarks/hostile_frames.py, not here.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.running import run_alone
from support.shipped import shipped_suite

from grader import framing, observations
from grader.run import runner

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import hostile_frames  # noqa: E402  - the benchmark's submissions


@pytest.fixture(scope="module")
def cases():
    return tuple(c for s in shipped_suite().suite.specs[:2] for c in s.cases)


def test_raw_frames_are_kept_only_for_the_cache(tmp_path, cases):
    honest = hostile_frames.make("honest", tmp_path)
    plain = run_alone(honest, cases)
    assert all(c.status == "observed" and c.frame == b"" for c in plain.cases)
    cached = run_alone(honest, cases, keep_frame_bytes=1 << 20)
    assert all(c.status == "observed" and c.frame.startswith(framing.MAGIC) for c in cached.cases)


@pytest.mark.parametrize("kind", ["padded", "trickled"])
def test_a_frame_s_unused_bytes_are_refused(tmp_path, cases, kind):
    """~9 MiB frames (a 1 MiB header, an 8 MiB blob no value uses) and 1 MiB frames of a padded
    header written 4 KiB at a time: each an error for its case, never a result held to judging."""
    run = run_alone(hostile_frames.make(kind, tmp_path), cases)
    assert all(c.status == "error" and c.observation is None for c in run.cases), [c.message for c in run.cases]
    assert "not one JSON object" in run.cases[0].message, run.cases[0].message  # (a lone unused blob:
    # tests/test_observations.py::test_a_blob_no_value_uses_is_refused_not_held)


def test_a_submission_s_results_are_bounded_in_all(tmp_path, cases, monkeypatch):
    """Past MAX_RESULT_BYTES from one submission, the case is an error and the rest are not run."""
    monkeypatch.setattr(runner, "MAX_RESULT_BYTES", 20 << 20)
    run = run_alone(hostile_frames.make("padded-used", tmp_path), cases)
    statuses = [c.status for c in run.cases]
    assert all(s == "error" for s in statuses)
    assert "more results than a submission may send" in " ".join(c.message for c in run.cases)
    assert "were not run" in run.cases[-1].message


def _with_header(body: bytes, header: bytes) -> bytes:
    header_len = int.from_bytes(body[4:8], "little")
    return body[:4] + len(header).to_bytes(4, "little") + body[8:12] + header + body[12 + header_len :]


def test_a_header_of_padding_is_refused_and_an_honest_one_is_not():
    steps = [{"index": 0, "outcome": "returned", "value": 0, "error": None, "launches": 1, "witness": [],
              "input_address": None, "graphs": None, "note": ""}]  # fmt: skip
    body = framing.observation_frame("c", steps, [])[framing.PREFIX_BYTES :]
    assert observations.decode_observations(body, "c", 1).steps[0].value == 0
    header = body[12 : 12 + int.from_bytes(body[4:8], "little")]
    pad = b" " * observations.LOOSE_HEADER_BYTES
    with pytest.raises(observations.ProtocolError, match="not one JSON object"):  # refused before parsing
        observations.decode_observations(_with_header(body, header + pad), "c", 1)
    inside = header.replace(b'"case"', pad + b'"case"', 1)  # between two keys: parsed, then refused
    with pytest.raises(observations.ProtocolError, match="most of it padding"):
        observations.decode_observations(_with_header(body, inside), "c", 1)


def test_after_a_hidden_case_every_stop_reads_the_same_to_the_student(tmp_path, cases, monkeypatch):
    """Issue 31, point 6: once a hidden case ran, too many results give the submission the same
    problem line as a process ended so that the import fails again (runner.STOPPED_AFTER_HIDDEN),
    so a hidden case cannot choose between two texts; visible cases alone keep the precise one."""
    monkeypatch.setattr(runner, "MAX_RESULT_BYTES", 20 << 20)
    sub = hostile_frames.make("padded-used", tmp_path)
    hidden = run_alone(sub, cases, redacted=(True,) * len(cases))
    assert hidden.problem == runner.STOPPED_AFTER_HIDDEN
    assert "ended its process" in runner.STOPPED_AFTER_HIDDEN and "64 MiB of results" in runner.STOPPED_AFTER_HIDDEN
    shown = run_alone(sub, cases)
    assert shown.problem != runner.STOPPED_AFTER_HIDDEN and "(padded or oversized frames)" in shown.problem
