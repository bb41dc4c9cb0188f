"""The HTML reports in a real browser: headless Chromium screenshots and the rendered DOM.

Skipped only where no ``chromium`` (or ``chromium-browser``) binary is on PATH.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest
from browser import CHROMIUM, FLAGS
from test_reports_samples import SCRIPT, SECRETS, all_reports, crashing_report, failing_report, hidden_report

from reports import write_batch_outputs, write_submission_outputs
from reports.view import fmt_points

pytestmark = [
    pytest.mark.chromium,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium or chromium-browser binary on PATH"),
]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def screenshot(tmp_path: Path, page: Path, size: str, name: str) -> Path:
    shot = tmp_path / name
    proc = chromium(tmp_path, f"--screenshot={shot}", f"--window-size={size}", page.as_uri())
    assert shot.is_file(), f"no screenshot; chromium said:\n{proc.stderr[-2000:]}"
    return shot


def dump_dom(tmp_path: Path, page: Path) -> str:
    proc = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("graphgrade-out")
    reports = all_reports()
    dirs = [out / r.submission for r in reports]
    for r, d in zip(reports, dirs):
        write_submission_outputs(r, d)
    write_batch_outputs(reports, dirs, out)
    return out


def test_failing_report_screenshot_and_dom(rendered, tmp_path):
    report = failing_report()
    page = rendered / report.submission / "report.html"
    shot = screenshot(tmp_path, page, "1200,2000", "shot.png")
    assert shot.stat().st_size > 20_000  # a real page, not a blank canvas
    assert png_size(shot) == (1200, 2000)
    phone = screenshot(tmp_path, page, "390,1600", "phone.png")
    assert phone.stat().st_size > 10_000 and png_size(phone) == (390, 1600)

    dom = dump_dom(tmp_path, page)
    assert f'{fmt_points(report.score)}<span class="max"> / {fmt_points(report.max_score)}' in dom
    failed_titles = {s.title for s in report.specs for c in report.cases if c.spec == s.id and c.status != "passed"}
    assert failed_titles
    for title in failed_titles:
        assert title in dom
    assert "<script" not in dom.lower()


def test_crash_output_stays_text_in_the_browser(rendered, tmp_path):
    page = rendered / crashing_report().submission / "report.html"
    dom = dump_dom(tmp_path, page)
    # Had the tag been executed or parsed as markup, the DOM would hold a <script> element.
    assert "<script" not in dom.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert SCRIPT not in dom


def test_hidden_case_secrets_not_in_rendered_dom(rendered, tmp_path):
    dom = dump_dom(tmp_path, rendered / hidden_report().submission / "report.html")
    for secret in SECRETS:
        assert secret not in dom
    assert "Hidden case 1" in dom


def test_summary_in_browser(rendered, tmp_path):
    page = rendered / "summary.html"
    shot = screenshot(tmp_path, page, "1200,2000", "summary.png")
    assert shot.stat().st_size > 20_000
    dom = dump_dom(tmp_path, page)
    for r in all_reports():
        assert f'href="{r.submission}/report.html"' in dom
    assert "Class summary" in dom
