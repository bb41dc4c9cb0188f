"""The line in the student's code: a typo in a method, and a replay that runs the ops on the
caller's array, graded in both isolation modes; every output that shows the case names the
submission's file and line, that line's source and a traceback of the submission's frames only."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.lab_ops import ops
from support.labs import (
    EAGER_LINE,
    REPLAY_BODY,
    TYPO_LINE,
    eager_submission,
    lab,
    line_of,
    reference_with,
    typo_submission,
)

from grader import framing, observations
from grader.observe.locations import Locator, observe_bumps
from grader.spec_model import OpSpec

Witness, make_ops = ops.Witness, ops.make_ops

GRAPHGRADE = Path(sys.executable).with_name("graphgrade")
SUBSET = ("01_launch_counter.yaml", "05_single_launch_replay.yaml", "04_static_buffer.yaml")


def grade(tmp_path: Path, source: str, isolation: str) -> tuple[Path, str]:
    sub = lab(tmp_path, source, SUBSET)
    out = tmp_path / "out"
    proc = subprocess.run(
        [str(GRAPHGRADE), "grade", str(sub), "--specs", str(tmp_path / "specs"), "--out", str(out), "--no-cache"]
        + ["--isolation", isolation],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return out / "lab", proc.stdout


def visible_failures(out: Path) -> list[dict]:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return [c for c in report["cases"] if c["status"] != "passed" and not c["redacted"]]


@pytest.mark.parametrize("isolation", ["module", "process"])
def test_a_typo_in_a_method_names_its_file_line_source_and_traceback_in_every_output(tmp_path, isolation):
    source = typo_submission()
    line = line_of(source, TYPO_LINE)
    caller = line_of(source, "            return self._replay(entry, x)")
    out, stdout = grade(tmp_path, source, isolation)
    failures = visible_failures(out)
    assert failures
    message = failures[0]["message"]
    assert "raised AttributeError" in message
    assert f"\n  at cudagraph.py:{line} in _replay: self._load(entry.static_inputs, x)" in message
    # a traceback of the submission's own frames only, outermost first
    assert "your code's traceback (most recent call last):" in message
    assert f"cudagraph.py:{caller} in __call__" in message
    assert message.index(f"cudagraph.py:{caller}") < message.rindex(f"cudagraph.py:{line}")
    for grader_frame in ("interpreter.py", "grader/", "site-packages", "numpy"):
        assert grader_frame not in message
    # the step list and the check line say where too
    step = next(s for s in failures[0]["steps"] if s["outcome"].startswith("raised"))
    assert step["outcome"].endswith(f" at cudagraph.py:{line}")
    # ... as the check record's own fields, never inside its observation text
    failed = [c for c in failures[0]["checks"] if not c["passed"]]
    assert any((c["file"], c["line"], c["function"]) == ("cudagraph.py", line, "_replay") for c in failed)
    assert not any("(at " in c["observed"] for c in failed)
    # every output that shows the case
    for name in ("report.html", "results.json", "junit.xml"):
        text = (out / name).read_text(encoding="utf-8")
        assert f"cudagraph.py:{line}" in text, name
        assert "entry.static_inputs" in text, name
    # the terminal line of the submission
    assert f"[first failure at cudagraph.py:{line} (" in stdout


@pytest.mark.parametrize("isolation", ["module", "process"])
def test_a_replay_that_runs_the_ops_on_x_cites_the_op_call_and_the_bumps(tmp_path, isolation):
    source = eager_submission()
    eager_call = line_of(source, EAGER_LINE)
    op_line = line_of(source, "        x = op(x)")
    bump_line = line_of(source, "        LaunchCounter.bump(1)")
    out, _ = grade(tmp_path, source, isolation)
    failures = visible_failures(out)
    witness = next(c for c in failures if "instead of the static input buffer" in c["message"])["message"]
    assert "op 0 was handed the caller's array:" in witness
    assert f"called at cudagraph.py:{op_line} in run_eager: x = op(x)" in witness
    assert f"called from cudagraph.py:{eager_call} in _replay: y = run_eager(self.ops, x)" in witness
    launches = next(c for c in failures if "should cost 1 launch but cost" in c["message"])["message"]
    assert "the ops ran through run_eager on this replay, one launch per op:" in launches
    assert f"called at cudagraph.py:{eager_call} in _replay: y = run_eager(self.ops, x)" in launches
    assert f"counted at cudagraph.py:{bump_line} in run_eager: LaunchCounter.bump(1)" in launches
    assert f"called from cudagraph.py:{eager_call} in _replay" in launches


def test_a_replay_that_bumps_twice_is_told_where_it_counted_not_that_the_ops_ran_eagerly(tmp_path):
    """Every replay calls the ops (it recomputes them from the buffer): an extra launch counted by
    a second bump is named at that bump, and never blamed on the ops running one by one."""
    source = reference_with(REPLAY_BODY, REPLAY_BODY + "\n        LaunchCounter.bump(1)  # twice")
    second = line_of(source, "        LaunchCounter.bump(1)  # twice")
    first = second - 1  # the replay's own bump, the line before
    out, _ = grade(tmp_path, source, "module")
    launches = next(c for c in visible_failures(out) if "should cost 1 launch but cost 2" in c["message"])["message"]
    assert "the ops ran" not in launches and "run_eager" not in launches  # no cause but the bumps
    assert "LaunchCounter.bump was called 2 times during this step:" in launches
    assert f"counted at cudagraph.py:{first} in _replay" in launches
    assert f"counted at cudagraph.py:{second} in _replay" in launches


def _observed(tmp_path: Path, source: str):
    """A submission imported from ``source``, its locator, and a relu op located by it."""
    (tmp_path / "cudagraph.py").write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"cudagraph_{tmp_path.name}", tmp_path / "cudagraph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    locator = Locator.of_module(module)
    witness = Witness(locator)
    (op,) = make_ops((OpSpec("relu"),), 0, witness)
    return module, locator, witness, op


def test_the_worker_records_the_caller_of_an_op_and_of_bump(tmp_path):
    module, locator, witness, op = _observed(
        tmp_path,
        "class LaunchCounter:\n    n = 0\n\n    @classmethod\n    def bump(cls, k=1):\n        cls.n += k\n\n\n"
        "def twice(op, x):\n    LaunchCounter.bump(2)\n    LaunchCounter.bump()\n    return op(x)\n",
    )
    bumps: list = []
    undo = observe_bumps(module, locator, bumps, "LaunchCounter")
    module.twice(op, [1.0, -1.0])
    undo()
    assert module.LaunchCounter.n == 3 and type(module.LaunchCounter.__dict__["bump"]) is classmethod
    module.LaunchCounter.bump(1)  # once undone, nothing more is recorded
    assert [amount for amount, _ in bumps] == [2, 1]
    sites = locator.sites_wire()
    assert [sites[site][0][:2] for _, site in bumps] == [["cudagraph.py", 10], ["cudagraph.py", 11]]
    assert sites[witness.calls[0][6]] == [["cudagraph.py", 12, "twice", "return op(x)"]]


def test_location_fields_are_validated_and_bounded():
    def frame_of(step: dict) -> bytes:
        body, _ = framing.split_frame(framing.observation_frame("s/c", [step], []))
        return body

    good = {"index": 0, "outcome": "returned", "sites": [[["cudagraph.py", 3, "f", "x = op(x)"]]], "bumps": [[1, 0]]}
    good["witness"] = [[0, 0, 1, [2], "float32", 0, 0]]
    step = observations.decode_observations(frame_of(good), "s/c", 1).steps[0]
    assert step.site(step.witness[0].site)[0].source == "x = op(x)" and step.bumps[0].amount == 1
    bad = [
        {**good, "sites": [[["cudagraph.py", 3, "f"]]]},  # a frame of three parts
        {**good, "sites": [[["x" * (framing.MAX_FRAME_TEXT + 1), 3, "f", ""]]]},  # a file name too long
        {**good, "sites": [[["a", 1, "f", ""]]] * (framing.MAX_SITES + 1)},  # too many sites
        {**good, "bumps": [[1, 1]]},  # a bump at a site the step does not have
        {**good, "witness": [[0, 0, 1, [2], "float32", 0, 3]]},  # a call at a site the step does not have
    ]
    for step in bad:
        with pytest.raises(framing.ProtocolError):
            observations.decode_observations(frame_of(step), "s/c", 1)
    # a frame of version 1 is still read, and may not carry the new fields
    old = json.dumps({"protocol": 1, "case": "s/c", "steps": [{"index": 0, "outcome": "returned"}]}).encode()
    body = framing.MAGIC + len(old).to_bytes(4, "little") + (0).to_bytes(4, "little") + old
    assert observations.decode_observations(body, "s/c", 1).steps[0].sites == ()
    old = old.replace(b'"returned"}', b'"returned", "bumps": []}')
    body = framing.MAGIC + len(old).to_bytes(4, "little") + (0).to_bytes(4, "little") + old
    with pytest.raises(framing.ProtocolError):
        observations.decode_observations(body, "s/c", 1)


def test_prairielearn_results_name_the_line(tmp_path):
    from test_prairielearn import job, run_job

    source = typo_submission()
    line = line_of(source, TYPO_LINE)
    root = job(tmp_path, {"cudagraph.py": source}, only=SUBSET)
    proc, results, _ = run_job(root)
    assert proc.returncode == 0, proc.stderr
    failing = [t for t in results["tests"] if t["points"] < t["max_points"] and "Hidden case" not in t["name"]]
    assert failing and any(f"at cudagraph.py:{line} in _replay" in t["message"] + t["output"] for t in failing)
    hidden = [t for t in results["tests"] if "Hidden case" in t["name"]]
    assert hidden and not any("cudagraph.py:" in t["message"] + t["output"] for t in hidden)


def test_a_case_of_many_steps_stays_inside_the_frame_bounds(tmp_path):
    """Many distinct call sites and deep tracebacks: the worker caps them per step and per case."""
    lines = "".join(f"    y = op(x)  # site {i} {'x' * 300}\n" for i in range(40))
    module, locator, witness, op = _observed(
        tmp_path,
        f"def many(op, x):\n{lines}    return y\n\n\ndef deep(n):\n    return deep(n + 1) if n < 50 else 1 / 0\n",
    )
    traced = 0
    for _ in range(20):  # twenty steps
        locator.new_step()
        module.many(op, [1.0])
        assert len(locator.sites) <= framing.MAX_SITES
        wire = locator.sites_wire()
        assert all(
            len(part) <= framing.MAX_FRAME_TEXT
            for site in wire
            for frame in site
            for part in (frame[0], frame[2], frame[3])
        )
        try:
            module.deep(0)
        except ZeroDivisionError as exc:
            frames = locator.traceback(exc.__traceback__)
        assert len(frames) <= framing.MAX_TRACE_FRAMES and all(f[2] == "deep" for f in frames)
        traced += len(frames)
    assert locator.case_sites == framing.MAX_CASE_SITES and traced == framing.MAX_CASE_TRACE_FRAMES
    assert [c[6] for c in witness.calls[-3:]] == [-1, -1, -1]  # past the case's bound: not located


def test_a_padded_call_on_the_callers_array_cites_the_op_call(tmp_path):
    """padded_rows names the line that handed op 0 the caller's array, as witness does."""
    from support.shipped import shipped_suite

    from grader.judging.judge import judge_case
    from grader.observe.interpreter import observe_in_process

    source = reference_with("        y = entry.static_input\n", "        y = x\n")
    module, _, _, _ = _observed(tmp_path, source)
    loaded = shipped_suite()
    uid = "padding-basics/padded-rows-zeroed"
    case = next(c for c in loaded.suite.cases if c.uid == uid)
    verdict = judge_case(case, loaded.oracles[uid], observe_in_process(module, uid, case.steps))
    assert verdict.status == "failed" and "was handed the caller's own array" in verdict.message
    op_line = line_of(source, "            y = op(y)")
    assert "op 0 was handed the caller's array:" in verdict.message
    assert f"called at cudagraph.py:{op_line} in _replay: y = op(y)" in verdict.message
