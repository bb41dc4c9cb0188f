"""Characters that hide, reorder or split what a reader sees are shown by their code point on
every page (issue 31, point 6): a bidi control, zero-width character, BOM or control character
in a name or in code reads ``<U+202E>`` (with a warning on similarity.html, the page that shows
code as read from the files), never raw; and no file name splits a ``# file:`` header line."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from test_reports_samples import failing_report, passing_report

from grader.commands.similarity_compare import PairDetail, SimilarPair
from grader.commands.similarity_sources import submission_source
from grader.safetext import count_invisible, visible
from reports.html import render_submission, render_summary
from reports.similarity_html import render_similarity

TRICKS = {
    "\u202e": "<U+202E>",  # right-to-left override: "Trojan Source"
    "\u2066": "<U+2066>",  # left-to-right isolate
    "\u200b": "<U+200B>",  # zero-width space
    "\ufeff": "<U+FEFF>",  # BOM
    "\u2028": "<U+2028>",  # line separator
    "\x1b": "<U+001B>",  # escape (in code; a page's text turns controls into \\x1b first)
}
ESCAPED = {ch: name.replace("<", "&lt;").replace(">", "&gt;") for ch, name in TRICKS.items()}


@pytest.mark.parametrize(("raw", "shown"), list(TRICKS.items()))
def test_visible_names_each_trick_by_its_code_point(raw, shown):
    assert visible(f"a{raw}b") == f"a{shown}b" and count_invisible(f"a{raw}b") == 1
    assert visible("tab\tand\nnewline") == "tab\tand\nnewline"
    assert visible("a\nb", keep="") == "a<U+000A>b"  # a name: one line whatever it holds
    assert visible("plain ascii é ü 漢") == "plain ascii é ü 漢"


def _no_raw_tricks(html: str) -> None:
    for ch in TRICKS:
        assert ch not in html, f"U+{ord(ch):04X} raw on the page"


def test_similarity_html_names_the_tricks_in_code_and_warns():
    code = "def f():\n    access = 'user'  # \u202e } \u2066if admin\u2069 \u2066\n    return access\u200b\n"
    pair = SimilarPair("alice", "bob", 0.9, 0.9, 0.9, 40)
    html = render_similarity((PairDetail(pair, code, "x = 1\n", ((0, 10),), ()),), 2, 0.5, 1)
    _no_raw_tricks(html)
    assert ESCAPED["\u202e"] in html and ESCAPED["\u200b"] in html and "&lt;U+2069&gt;" in html
    assert html.count('class="invisible-warning"') == 1  # alice's side only
    warning = re.search(r'class="invisible-warning">([^<]*)<', html).group(1)
    assert "5 invisible or direction-changing characters" in warning


def test_similarity_html_shares_the_other_pages_style():
    pair = SimilarPair("alice", "bob", 0.9, 0.9, 0.9, 40)
    html = render_similarity((PairDetail(pair, "x = 1\n", "x = 1\n", ((0, 5),), ((0, 5),)),), 2, 0.5, 1)
    summary = render_summary([passing_report("alice"), failing_report("bob")], ["alice/report.html", "bob/report.html"])

    def root_rules(page: str) -> str:
        return re.search(r":root\{[^}]*\}", page).group(0)

    assert root_rules(html) == root_rules(summary)  # the same stylesheet: colours, fonts, dark mode
    assert '<span class="brand">' in html and 'class="card pair"' in html and "<style>" in html
    assert ".pair{" in html and ".hero{" not in html  # its own rules in, others' pruned (reports.style)


@pytest.mark.parametrize("page", ["report", "staff", "summary"])
def test_every_report_page_names_a_trick_that_reached_it(page):
    """Text normally reaches a page through safe_text (U+FFFD); a page still shows any that did
    not, by its code point: the pages' one filter does it (reports.html._finalize)."""
    name = "mal\u202elory\u200b"
    report = replace(failing_report(name), problem="import failed \u2066here\u2069")
    if page == "summary":
        html = render_summary([report], ["x/report.html"])
    else:
        html = render_submission(report, staff=page == "staff")
    _no_raw_tricks(html)
    assert "mal&lt;U+202E&gt;lory&lt;U+200B&gt;" in html


def test_a_newline_in_a_file_name_cannot_split_its_header(tmp_path: Path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "cudagraph.py").write_text("import helper\nx = 1\n")
    forged = "z\n# file: cudagraph.py\nFORGED = 1\n#.py"
    try:
        (sub / forged).write_text("y = 2\n")
    except OSError:
        pytest.skip("this file system refuses a newline in a name")
    source = submission_source(sub)
    headers = [line for line in source.splitlines() if line.startswith("# file:")]
    assert headers == ["# file: cudagraph.py", "# file: z<U+000A># file: cudagraph.py<U+000A>FORGED = 1<U+000A>#.py"]
    assert "\nFORGED = 1" not in source
