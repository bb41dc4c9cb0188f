"""Issue 26, point 4: "Fix this first" is honest. It ranks the causes of failure by the points
they stop, core points first, says the points, and never sends a student to a stretch part
while a core part is unwritten (the old box ranked by the number of cases, and sent a student
with PiecewiseGraphRunner and InferenceGraphCapture both unwritten to the state machine, "the
quickest way to more points")."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_reports_samples import all_passing_cases, make_report

from grader.judging.report_reading import read_report
from grader.judging.results import CheckLine
from reports import render_submission
from reports.view import fix_first, page_causes, spec_views, tag_group

REPO = Path(__file__).resolve().parents[1]
GRAPHGRADE = Path(sys.executable).with_name("graphgrade")

UNWRITTEN = """

def _unwritten(self, *args, **kwargs):
    raise NotImplementedError


PiecewiseGraphRunner.__init__ = _unwritten  # core: not written yet
InferenceGraphCapture.__init__ = _unwritten  # stretch: not written yet
"""


def _fix_box(page: str) -> str:
    start = page.index('id="fix-first"')
    return page[start : page.index("</section>", start)]


@pytest.fixture(scope="module", params=["module", "process"])
def core_and_stretch_unwritten(request, tmp_path_factory) -> Path:
    """The reference with one core part (PiecewiseGraphRunner) and one stretch part
    (InferenceGraphCapture) unwritten, graded as a student grades it (the public specs), in each
    isolation mode."""
    root = tmp_path_factory.mktemp("two-parts")
    lab = root / "lab"
    lab.mkdir()
    (lab / "cudagraph.py").write_text(
        (REPO / "reference" / "cudagraph.py").read_text(encoding="utf-8") + UNWRITTEN, encoding="utf-8"
    )
    (lab / "answers.md").write_text((REPO / "reference" / "answers.md").read_text(encoding="utf-8"))  # lines unmoved
    proc = subprocess.run(
        [
            str(GRAPHGRADE),
            "grade",
            str(lab),
            "--visibility",
            "visible",
            "--out",
            str(root / "out"),
            "--jobs",
            "1",
            "--isolation",
            request.param,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return root / "out" / "lab"


def test_an_unwritten_core_part_comes_before_an_unwritten_stretch_part(core_and_stretch_unwritten):
    report = read_report(core_and_stretch_unwritten / "report.json")
    failing = [c for c in report.cases if c.status != "passed"]
    by_part = {tag_group(c.tag) for c in failing}
    assert by_part == {"core", "stretch"}  # both parts are really unwritten ...
    stretch = [c for c in failing if tag_group(c.tag) == "stretch"]
    core = [c for c in failing if tag_group(c.tag) == "core"]
    assert len(stretch) > len(core)  # ... and the stretch part stops more cases: the old ranking's pick
    assert all("NotImplementedError" in c.message for c in failing)

    box = _fix_box((core_and_stretch_unwritten / "report.html").read_text(encoding="utf-8"))
    first = box[: box.index("</p>")]
    assert "PiecewiseGraphRunner" in first and "InferenceGraphCapture" not in first
    core_points = sum(c.max_score - c.score for c in core)
    assert f"worth <b>{core_points:g} points</b>" in box and "all core" in box
    assert "quickest" not in box
    # its link lands on a core case, and the stretch part comes next, with its points
    anchor = re.search(r'<a href="#([^"]+)">See it in', box).group(1)
    assert anchor.startswith("spec-piecewise-basics-")
    then = box[box.index('class="then"') :]
    assert "InferenceGraphCapture" in then and "(stretch)" in then
    stretch_points = sum(c.max_score - c.score for c in stretch)
    assert f"{stretch_points:g} points (stretch)" in then


def _report_with(failures: dict[str, tuple[str, int, str]]):
    """The passing sample with, per spec id, its first n cases failed with a message and a
    record of the given cause (causes are told apart by their records, never their messages)."""
    cases, seen = [], {}
    for c in all_passing_cases():
        message, n, cause = failures.get(c.spec, ("", 0, ""))
        seen[c.spec] = seen.get(c.spec, 0) + 1
        if seen[c.spec] <= n:
            record = CheckLine(0, cause, "", "", False, cause=cause)
            c = replace(c, status="failed", score=0.0, message=message, cause=cause, checks=(record,))
        cases.append(c)
    return make_report("fay", cases)


def test_core_points_outrank_more_stretch_points_and_more_cases():
    # one core case (piecewise, 2 points) against two stretch cases (state machine, 3 points)
    report = _report_with(
        {
            "piecewise-segments": (
                "Step 1 (pw = PiecewiseGraphRunner([relu])): raised ValueError: bad split.",
                1,
                "raised",
            ),
            "decode-state-machine": ("Step 2 (sm.step_mode()): returned 'REPLAY', expected 'WARMUP'.", 2, "step_mode"),
        }
    )
    specs = spec_views(report)
    causes = page_causes(specs).causes
    assert [c.part for c in causes] == ["core", "stretch"]
    assert causes[0].points == 2 < causes[1].points == 3 and causes[0].n_cases < causes[1].n_cases
    fix = fix_first(specs)
    assert "PiecewiseGraphRunner" in fix.message and fix.points == 2 and fix.part == "core"
    assert [c.part for c in fix.then] == ["stretch"]


def test_among_core_causes_the_one_that_stops_more_points_comes_first():
    report = _report_with(
        {
            "launch-counter-basics": (
                "Step 1 (LaunchCounter.reset()): raised KeyError: 'n'.",
                2,
                "raised",
            ),  # 2 points, 2 cases
            "replay-one-launch": (
                "Step 3 (runner(x)): launches during this call: expected 1, observed 3.",
                1,
                "launches",
            ),  # 2.5
        }
    )
    fix = fix_first(spec_views(report))
    assert "launches during this call" in fix.message and fix.points == 2.5
    page = render_submission(report)
    box = _fix_box(page)
    assert "worth <b>2.5 points</b>, all core" in box and "2 cases, 2 points (core)" in box


def test_a_cause_that_stops_core_and_stretch_cases_is_led_by_its_core_case():
    message = "Step 1 (runner = GraphRunner([relu])): raised NotImplementedError: this part of your cudagraph.py is not written yet."
    report = _report_with({"decode-state-machine": (message, 2, "raised"), "shape-keyed-cache": (message, 1, "raised")})
    specs = spec_views(report)
    (cause,) = page_causes(specs).causes
    assert cause.part == "core" and cause.lead.view.spec == "shape-keyed-cache"  # not the earlier stretch case
    assert cause.core_points == 2 and cause.points == 5
    fix = fix_first(specs)
    assert fix.anchor == cause.lead.anchor and "2</b> of them core" in _fix_box(render_submission(report))


def test_a_hidden_case_never_ranks_a_cause_for_a_student():
    secret = "Step 1 (runner(x)): returned 424242, expected 7."
    report = _report_with(
        {"padding-capture-sizes": (secret, 2, "value"), "eager-one-per-op": ("Step 1 (out): wrong.", 1, "output")}
    )
    report = replace(
        report, cases=tuple(replace(c, redacted=True) if c.spec == "padding-capture-sizes" else c for c in report.cases)
    )
    student = render_submission(report)
    assert "424242" not in student and "Step 1 (out): wrong." in _fix_box(student)
    (cause,) = page_causes(spec_views(report)).causes  # the hidden failures belong to no cause
    assert cause.lead.view.spec == "eager-one-per-op"
