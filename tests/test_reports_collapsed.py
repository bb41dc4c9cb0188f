"""Issue 26, point 5: a page a student reads. Not-passed cases with one cause collapse into one
block per spec (the cause's lead case in full once per page, every other case one line that
keeps its anchor), the notation key is written once per page, and the untouched template's
report.html stays under 70 KB (it was 202 KB: 40 failures with the same NotImplementedError,
each with its own expected/observed block and steps, and 30 copies of the notation key);
staff.html in proportion (it was 377 KB)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import html5lib
import pytest
from test_reports_samples import REPLAY_FAIL, all_passing_cases, make_report

from grader.judging.report_reading import read_report
from grader.judging.results import CheckLine
from grader.lab import active as active_lab
from reports import render_submission
from reports.view import page_causes, spec_views
from reports.view.notation import _NOTATIONS
from reports.view.text import slug

CORE_TAGS = active_lab().core_tags

REPO = Path(__file__).resolve().parents[1]
GRAPHGRADE = Path(sys.executable).with_name("graphgrade")
STUDENT_PAGE_BYTES = 77_000  # 70,000, the notebook answers' three cases and answers box, each its own cause
STAFF_PAGE_BYTES = 130_000  # 70 / 202 of the 377 KB staff.html of the untouched template


@pytest.fixture(scope="module", params=["module", "process"])
def template_graded(request, tmp_path_factory) -> Path:
    """student_template/cudagraph.py as handed out, graded with the default specs (all of them),
    in each isolation mode."""
    root = tmp_path_factory.mktemp("untouched")
    lab = root / "lab"
    lab.mkdir()
    shutil.copy(REPO / "student_template" / "cudagraph.py", lab / "cudagraph.py")
    proc = subprocess.run(
        [
            str(GRAPHGRADE),
            "grade",
            str(lab),
            "--out",
            str(root / "out"),
            "--jobs",
            "1",
            "--isolation",
            request.param,
            "--no-cache",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return root / "out" / "lab"


def _ids_and_links(page: str) -> tuple[Counter, set[str]]:
    html5lib.HTMLParser(strict=True).parse(page)  # valid HTML, or this raises
    ids = Counter(re.findall(r'\sid="([^"]+)"', page))
    return ids, set(re.findall(r'href="#([^"]+)"', page))


def test_the_untouched_template_page_is_small_and_lists_every_case(template_graded):
    report = read_report(template_graded / "report.json")
    page = (template_graded / "report.html").read_text(encoding="utf-8")
    assert len(page.encode("utf-8")) <= STUDENT_PAGE_BYTES, len(page.encode("utf-8"))
    ids, links = _ids_and_links(page)
    assert all(n == 1 for n in ids.values()), [i for i, n in ids.items() if n > 1]
    assert links <= set(ids), links - set(ids)  # every link lands on the page
    visible = [c for c in report.cases if not c.redacted]
    hidden = [c for c in report.cases if c.redacted]
    assert visible and hidden and all(c.status != "passed" for c in report.cases)
    for c in visible:  # every failing case is still there, reachable by its own anchor
        assert ids[f"spec-{slug(c.spec)}-{slug(c.case)}"] == 1, c.case
    for spec in {c.spec for c in hidden}:  # every hidden failure is one bit, listed by number
        n = sum(1 for c in hidden if c.spec == spec)
        section = page[page.index(f'id="spec-{slug(spec)}"') :]
        section = section[: section.index("</section>")]
        assert re.findall(r"<li>Hidden case (\d+)</li>", section) == [str(i) for i in range(1, n + 1)]
    # the 40 NotImplementedErrors are a few causes, each shown in full once
    causes = page_causes(spec_views(report)).causes
    assert len(causes) < len(visible) / 4
    assert page.count('<ol class="steps">') == page.count('<article class="case"') == len(causes)


def test_a_located_exception_is_said_once_not_again_as_expected_against_observed(template_graded):
    """A step that raised is the step list's own line ("raised NotImplementedError at
    cudagraph.py:65"); its "runs without an exception" check, located the same way, is not shown
    a second time as an Expected/Your code block."""
    report = read_report(template_graded / "report.json")
    located = [k for c in report.cases if not c.redacted for k in c.checks if k.file == "cudagraph.py" and k.line]
    assert located  # the template's stubs raise inside cudagraph.py
    page = (template_graded / "report.html").read_text(encoding="utf-8")
    assert "<pre>the step runs</pre>" not in page
    assert re.search(r"raised NotImplementedError at cudagraph\.py:\d+</span></li>", page)


def test_the_notation_key_is_written_once(template_graded):
    page = (template_graded / "report.html").read_text(encoding="utf-8")
    assert page.count('id="notation"') == 1 and page.count(">Notation</h2>") == 1
    key = page[page.index('id="notation"') :]
    key = key[: key.index("</section>")]
    notes = re.findall(r"<li>(.*?)</li>", key)
    explained = {note.split(":")[0] for _, note in _NOTATIONS}
    assert {n.split(":")[0] for n in notes} >= {"is_capturable=CEC", "float32[4, 8] seed 1"} and len(notes) >= 3
    assert all(n.split(":")[0] in explained for n in notes)
    for note in notes:  # each explained once, on the whole page
        assert page.count(note) == 1, note
    assert 'class="notes"' not in page and page.count('href="#notation"') >= 3  # cases point to the key


def test_the_staff_page_collapses_too_and_shows_every_case(template_graded):
    report = read_report(template_graded / "report.json")
    page = (template_graded / "staff.html").read_text(encoding="utf-8")
    assert len(page.encode("utf-8")) <= STAFF_PAGE_BYTES, len(page.encode("utf-8"))
    ids, links = _ids_and_links(page)
    assert links <= set(ids)
    for c in report.cases:  # hidden cases too, by their real ids
        assert ids[f"spec-{slug(c.spec)}-{slug(c.case)}"] == 1, c.case
    assert page.count("hidden from students") > 50 and page.count('id="notation"') == 1


def _failing(spec_cases: dict[str, int], message: str):
    cases, seen = [], Counter()
    for c in all_passing_cases():
        seen[c.spec] += 1
        if seen[c.spec] <= spec_cases.get(c.spec, 0):
            c = replace(c, status="failed", score=0.0, message=message)
        cases.append(c)
    return make_report("gil", cases)


def test_one_cause_in_two_specs_is_shown_in_full_once_and_points_there():
    message = "Step 1 (runner = GraphRunner([relu])): raised NotImplementedError: this part of your cudagraph.py is not written yet."
    report = _failing({"shape-keyed-cache": 2, "static-input-buffer": 2}, message)
    specs = spec_views(report)
    layout = page_causes(specs)
    (cause,) = layout.causes
    home = layout.blocks_of("spec-shape-keyed-cache")
    other = layout.blocks_of("spec-static-input-buffer")
    assert [b.home for b in home] == [True] and [b.home for b in other] == [False]
    assert (
        home[0].first is cause.lead
        and len(home[0].rest) == 1
        and [c.spec_anchor for c in home[0].elsewhere] == ["spec-static-input-buffer"]
    )
    page = render_submission(report)
    assert (
        page.count('<article class="case"') == 1 and page.count(message) == 3
    )  # fix this first, in full, and in the other spec
    assert f'href="#{cause.lead.anchor}"' in page  # the other spec's block points to the full one
    for c in cause.cases:
        assert page.count(f'id="{c.anchor}"') == 1


def test_different_causes_in_one_spec_stay_apart():
    report = make_report(
        "hal",
        [
            REPLAY_FAIL,
            replace(
                REPLAY_FAIL,
                case="other-case",
                message="Step 1 (runner(x)): raised ValueError: bad.",
                cause="raised",  # another record's cause: another cause (no message text is read)
                checks=(
                    CheckLine(0, "runs without an exception", "", "raised ValueError: bad.", False, cause="raised"),
                ),
            ),
            *[c for c in all_passing_cases() if c.spec != "replay-one-launch"],
        ],
    )
    page = render_submission(report)
    assert page.count('<article class="case"') == 2 and "raised ValueError: bad." in page
    assert REPLAY_FAIL.message in page


def test_a_stricter_reading_spec_is_not_counted_as_core_points(template_graded):
    """graph-entry-output is graphgrade's stricter reading of a core part: "Fix this first" counts
    its points apart from the core points (the handout's), like the report's per-tag groups."""
    report = read_report(template_graded / "report.json")
    cases = [sc for cause in page_causes(spec_views(report)).causes for sc in cause.cases]
    stricter = {sc.spec_anchor for sc in cases if sc.part == "stricter"}
    assert stricter == {"spec-graph-entry-output"}
    core_specs = {s.id for s in report.specs if s.tag in CORE_TAGS and s.reading == "handout"}
    assert {sc.spec_anchor for sc in cases if sc.part == "core"} == {f"spec-{slug(s)}" for s in core_specs} & {
        sc.spec_anchor for sc in cases
    }
