"""Every HTML page in a real browser: axe-core's WCAG 2.1 A/AA rules with zero violations in the
light and the dark colour scheme, screenshots of the pages that matter, and a 500-submission
summary measured (size, render time).

Skipped only where Chromium or axe-core is absent (``.ci/run`` installs both). Screenshots go to
the test's tmp dir, and also to ``$GRAPHGRADE_SHOTS`` when that is set (for a person to look at).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import browser
import pytest

from grader.judging.report_reading import read_report
from reports import write_batch_outputs
from reports.audit_html import render_audit

AXE = browser.axe_core_js()

pytestmark = [
    pytest.mark.chromium,
    pytest.mark.skipif(browser.CHROMIUM is None, reason="no chromium or chromium-browser binary on PATH"),
    pytest.mark.skipif(AXE is None, reason="axe-core not installed (npm install --prefix .ci/node axe-core@4.14)"),
]

REPO = Path(__file__).resolve().parents[1]
GRAPHGRADE = Path(sys.executable).with_name("graphgrade")


def half_done_source() -> str:
    """The student template with LaunchCounter and run_eager written, GraphRunner and the rest
    still raising NotImplementedError: the most common state of a lab in its first week."""
    src = (REPO / "student_template" / "cudagraph.py").read_text(encoding="utf-8")
    edits = [
        (
            '        """Set the count back to 0."""\n        raise NotImplementedError',
            '        """Set the count back to 0."""\n        cls.n = 0',
        ),
        (
            '        """Add ``k`` launches to the count."""\n        raise NotImplementedError',
            '        """Add ``k`` launches to the count."""\n        cls.n += k',
        ),
        (
            '    Each op receives the previous op\'s result; the first one receives ``x``.\n    """\n    raise NotImplementedError',
            '    Each op receives the previous op\'s result; the first one receives ``x``.\n    """\n'
            "    for op in ops:\n        LaunchCounter.bump(1)\n        x = op(x)\n    return x",
        ),
    ]
    for old, new in edits:
        assert old in src, old
        src = src.replace(old, new)
    return src


def save_copy(shot: Path) -> None:
    target = os.environ.get("GRAPHGRADE_SHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(target) / shot.name)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """A half-done submission graded for real against every spec (hidden ones included)."""
    root = tmp_path_factory.mktemp("a11y")
    lab = root / "half-done-lab"
    lab.mkdir()
    (lab / "cudagraph.py").write_text(half_done_source(), encoding="utf-8")
    out = root / "out"
    proc = subprocess.run(
        [str(GRAPHGRADE), "grade", str(lab), "--out", str(out), "--jobs", "1"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def class_of_500(graded, tmp_path_factory) -> Path:
    """summary.html for 500 submissions: the real half-done report and the reference's shape,
    varied (names, paths, which cases pass), so every block of the page is full."""
    base = read_report(graded / "half-done-lab" / "report.json")
    out = tmp_path_factory.mktemp("class500")
    reports, dirs, paths = [], [], []
    for i in range(500):
        cases = tuple(
            replace(c, status="passed", score=c.max_score, message="All checks passed.")
            if (j * 7 + i) % 5 < i % 5
            else c
            for j, c in enumerate(base.cases)
        )
        score = sum(c.score for c in cases)
        specs = tuple(replace(s, score=sum(c.score for c in cases if c.spec == s.id)) for s in base.specs)
        name = f"student-{i:03d}" if i % 50 else "lab"
        reports.append(replace(base, submission=name, cases=cases, specs=specs, score=round(score, 2)))
        dirs.append(out / f"{name}-{i}")
        paths.append(f"/submissions/section-{i % 4}/{name}")
    write_batch_outputs(reports, dirs, out, paths)
    return out / "summary.html"


@pytest.fixture(scope="module")
def audit_page(tmp_path_factory) -> Path:
    from test_audit import _evaluate

    page = tmp_path_factory.mktemp("audit") / "audit.html"
    page.write_text(render_audit(_evaluate(mutants={"m1": ({"a/one"}, ""), "survivor": (set(), "")})), encoding="utf-8")
    return page


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("page", ["report", "staff", "summary", "summary500", "audit"])
def test_axe_finds_no_wcag21_violation(page, scheme, graded, class_of_500, audit_page, tmp_path):
    path = {
        "report": graded / "half-done-lab" / "report.html",
        "staff": graded / "half-done-lab" / "staff.html",
        "summary": graded / "summary.html",
        "summary500": class_of_500,
        "audit": audit_page,
    }[page]
    result = browser.axe_audit(tmp_path, path, AXE, scheme)
    assert result["dark"] == (scheme == "dark"), "the colour scheme flag did not take effect"
    assert result["violations"] == [], browser.describe(result["violations"])


def test_half_done_report_first_screen_names_the_one_thing_to_fix(graded, tmp_path):
    page = graded / "half-done-lab" / "report.html"
    shot = browser.screenshot(tmp_path, page, "1280,900", tmp_path / "half-done-report.png")
    assert shot.stat().st_size > 20_000
    save_copy(shot)
    save_copy(browser.screenshot(tmp_path, page, "1280,900", tmp_path / "half-done-report-dark.png", "dark"))
    dom = browser.chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    fix = dom.index('id="fix-first"')
    assert fix < dom.index("By behaviour"), "the fix-first box comes before everything else"
    box = dom[fix : dom.index("</section>", fix)]
    assert "GraphRunner" in box and "not written yet" in box and "NotImplementedError" in box
    assert "_NotReached" not in dom and "could not be read" not in dom


def test_staff_page_of_a_hidden_failure(graded, tmp_path):
    page = graded / "half-done-lab" / "staff.html"
    save_copy(browser.screenshot(tmp_path, page, "1280,1800", tmp_path / "staff-hidden-failure.png"))
    dom = browser.chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert "hidden from students" in dom and "Staff view" in dom
    # A hidden case's steps, expected vs observed are there in full.
    report = read_report(graded / "half-done-lab" / "report.json")
    hidden_failure = next(c for c in report.cases if c.redacted and c.status != "passed")
    assert f'id="spec-{hidden_failure.spec}-{hidden_failure.case}"' in dom


def test_summary_of_500_submissions_stays_light(class_of_500, tmp_path):
    size = class_of_500.stat().st_size
    started = time.monotonic()
    shot = browser.screenshot(tmp_path, class_of_500, "1280,1400", tmp_path / "summary-500.png")
    seconds = time.monotonic() - started
    save_copy(shot)
    print(f"\nsummary.html for 500 submissions: {size / 1024:.0f} KiB, Chromium load + screenshot {seconds:.1f} s")
    assert size < 3 * 1024 * 1024, f"{size} bytes"
    assert shot.stat().st_size > 20_000  # rendered (the generous limit is browser.chromium's timeout)
    text = class_of_500.read_text(encoding="utf-8")
    assert text.index('href="#students"') < text.index("<h2")  # reachable from the top, before any section
