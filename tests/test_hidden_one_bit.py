"""Hostile: a hidden case is one bit to a student, however the submission fails it.

Seven submissions differ only in how they meet the hidden cases of replay-edge (all of which
build a GraphRunner; the visible spec beside them never does): pass, a generic failure (wrong
launch count), NotImplementedError,
GraphRunner not defined, a crash (os._exit), a typo in a method and a replay that runs the ops on
the caller's array (both located: staff see the submission's line, a student does not). Every student-facing output of the four that
fail (report.html, junit.xml, and results.json with hidden cases placed where students see them)
must be byte-identical once the submission's name is taken out: no message, status or timing
tells them apart. Staff outputs (report.json, staff.html) do tell them apart.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
GRAPHGRADE = Path(sys.executable).with_name("graphgrade")

VARIANTS = {
    "v-pass": "",
    "v-wrong": "_call = GraphRunner.__call__\n\n\ndef _wrong(self, x):\n    LaunchCounter.bump(5)\n    return _call(self, x)\n\n\nGraphRunner.__call__ = _wrong\n",
    "v-notimpl": "def _todo(self, *args, **kwargs):\n    raise NotImplementedError\n\n\nGraphRunner.__init__ = _todo\n",
    "v-missing": "del GraphRunner\n",
    "v-crash": "import os as _os\n\n\ndef _die(self, *args, **kwargs):\n    _os._exit(3)\n\n\nGraphRunner.__init__ = _die\n",
    # located failures: a typo in a method, and a replay that runs the ops on the caller's array
    "v-typo": "def _typo(self, entry, x):\n    self._load(entry.static_inputs, x)\n\n\nGraphRunner._replay = _typo\n",
    "v-eager": "def _eager(self, entry, x):\n    return self._real_rows(run_eager(self.ops, x), x)\n\n\nGraphRunner._replay = _eager\n",
}
FAILING = [n for n in VARIANTS if n != "v-pass"]
FAILING_ALL = [n for n in FAILING if n != "v-eager"]  # v-eager passes one hidden case the others fail


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("onebit")
    specs = root / "specs"
    specs.mkdir()
    shutil.copy(REPO / "specs" / "01_launch_counter.yaml", specs)  # its visible spec builds no runner
    replay = yaml.safe_load((REPO / "specs" / "05_single_launch_replay.yaml").read_text(encoding="utf-8"))
    replay["specs"] = [s for s in replay["specs"] if s["visibility"] != "visible"]  # replay-edge: hidden, all runners
    assert [s["id"] for s in replay["specs"]] == ["replay-edge"]
    (specs / "05_single_launch_replay.yaml").write_text(yaml.safe_dump(replay, sort_keys=False), encoding="utf-8")
    source = (REPO / "reference" / "cudagraph.py").read_text(encoding="utf-8")
    subs = []
    for name, tail in VARIANTS.items():
        (root / name).mkdir()
        (root / name / "cudagraph.py").write_text(source + "\n\n" + tail, encoding="utf-8")
        subs.append(str(root / name))
    out = root / "out"
    proc = subprocess.run(
        [
            str(GRAPHGRADE),
            "grade",
            *subs,
            "--specs",
            str(specs),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--gradescope-hidden-visibility",
            "after_published",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    (root / "terminal.txt").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    return out


def _student_view(out: Path, name: str) -> dict[str, str]:
    files = {
        f: (out / name / f).read_text(encoding="utf-8").replace(name, "NAME")
        for f in ("report.html", "junit.xml", "results.json")
    }
    gs = json.loads(files["results.json"])
    assert all(t["visibility"] != "hidden" for t in gs["tests"])  # placed where students see them
    files["results.json"] = re.sub(r'"execution_time": \d+', '"execution_time": T', files["results.json"])
    # Visible cases run first and keep their own timings (the student's own, noisy from run to
    # run); a hidden case has none.
    assert re.findall(r'name="Hidden case \d+" time="([^"]*)"', files["junit.xml"]) and all(
        t == "0.000" for t in re.findall(r'name="Hidden case \d+" time="([^"]*)"', files["junit.xml"])
    )
    visible_total = sum(
        float(t)
        for t in re.findall(r'<testcase classname="[^"]*" name="(?!Hidden)[^"]*" time="([^"]*)"', files["junit.xml"])
    )
    assert abs(float(re.search(r'<testsuite [^>]*time="([^"]*)"', files["junit.xml"]).group(1)) - visible_total) < 0.01
    files["junit.xml"] = re.sub(r'time="[^"]*"', 'time="T"', files["junit.xml"])
    return files


def test_the_seven_ways_a_hidden_case_ends_are_one_bit_to_the_student(graded):
    staff = {name: json.loads((graded / name / "report.json").read_text()) for name in VARIANTS}
    # The submissions really did fail the hidden cases in five different ways (staff see it) ...
    messages = {
        name: " | ".join(c["message"] for c in r["cases"] if c["redacted"] and c["status"] != "passed")
        for name, r in staff.items()
    }
    assert messages["v-pass"] == ""
    assert "should cost" in messages["v-wrong"]
    assert "NotImplementedError" in messages["v-notimpl"]
    assert "does not define GraphRunner" in messages["v-missing"]
    assert any(c["status"] == "crashed" for c in staff["v-crash"]["cases"])
    assert "_load(entry.static_inputs, x)" in messages["v-typo"] and "cudagraph.py:" in messages["v-typo"]
    assert (
        "the ops ran through run_eager on this replay, one launch per op:\n  called at cudagraph.py:"
        in messages["v-eager"]
    )
    assert len({messages[n] for n in FAILING}) == len(FAILING)
    # report.json's first cause: the staff's names the hidden case; the student's (what an LMS
    # comment or a tool may show them) is worked out from visible cases only: none failed
    for name in FAILING:
        assert staff[name]["first_cause"]["staff"]["case"].startswith("replay-edge/"), name
        assert staff[name]["first_cause"]["student"] is None, name
    for name in VARIANTS:
        assert "hidden from students" in (graded / name / "staff.html").read_text()
    # ... and a student cannot tell the four failures apart, in any file they can read.
    views = {name: _student_view(graded, name) for name in VARIANTS}
    for f in ("report.html", "junit.xml", "results.json"):
        assert len({views[n][f] for n in FAILING_ALL}) == 1, f
        for name in FAILING:  # the line in the submission's code is the staff's alone
            assert "cudagraph.py:" not in views[name][f] and "static_inputs" not in views[name][f]
    # The check records of the hidden cases (report.json format 4: an id, a cause key, the
    # student's file, line and function per line) are the staff's alone as well.
    typo = [k for c in staff["v-typo"]["cases"] if c["redacted"] for k in c["checks"] if not k["passed"]]
    assert any((k["file"], k["function"]) == ("cudagraph.py", "_typo") and k["line"] > 0 for k in typo)
    for name in FAILING:
        records = [k for c in staff[name]["cases"] if c["redacted"] for k in c["checks"]]
        for f in ("report.html", "junit.xml", "results.json"):
            assert "_typo" not in views[name][f]
            assert not [k["id"] for k in records if k["id"] in views[name][f]], (name, f)
    # nor does the terminal line of a submission name a hidden case's line
    terminal = (graded.parent / "terminal.txt").read_text(encoding="utf-8")
    assert "first failure at" not in terminal and "cudagraph.py:" not in terminal
    # The one bit does show: the passing submission's page differs.
    assert views["v-pass"]["report.html"] != views["v-wrong"]["report.html"]
    # No timing a hidden case could choose.
    for name in VARIANTS:
        gs = json.loads((graded / name / "results.json").read_text())
        junit = (graded / name / "junit.xml").read_text()
        visible = float(re.search(r'<testsuite [^>]*time="([^"]*)"', junit).group(1))
        assert abs(gs["execution_time"] - math.ceil(visible)) <= 1  # the visible cases' time only
        assert "graded in" not in views[name]["report.html"]
