"""similarity.html: each file shown once, every reported span highlighted, whatever order,
direction or overlap copydetect reports its spans in."""

from __future__ import annotations

from html.parser import HTMLParser
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from reports.similarity_html import render_similarity, segments
from reports.spans import normalise_spans

CODE = "def run(ops, x):\n    for op in ops:\n        x = op(x)\n    return x\n"


def covered(spans, length: int) -> set[int]:
    return {i for a, b in spans for i in range(max(0, min(a, b)), min(length, max(a, b)))}


def test_normalise_orders_clips_and_merges():
    assert normalise_spans([(30, 10), (5, 12), (40, 45), (45, 50), (-3, 2), (90, 120), (7, 7)], 100) == (
        (0, 2),
        (5, 30),
        (40, 50),
        (90, 100),
    )
    assert normalise_spans([], 10) == () and normalise_spans([(20, 30)], 10) == ()


@given(st.lists(st.tuples(st.integers(-20, 120), st.integers(-20, 120)), max_size=12), st.integers(0, 100))
def test_normalised_spans_cover_exactly_what_was_reported(spans, length):
    out = normalise_spans(spans, length)
    assert covered(out, length) == covered(spans, length)
    assert all(0 <= a < b <= length for a, b in out)
    assert all(b1 < a2 for (_, b1), (a2, _) in zip(out, out[1:]))  # disjoint, not touching, in order


@given(st.lists(st.tuples(st.integers(-5, 80), st.integers(-5, 80)), max_size=10))
def test_segments_show_the_file_once_with_every_span_marked(spans):
    parts = segments(CODE, spans)
    assert "".join(p.text for p in parts) == CODE
    marked, pos = set(), 0
    for p in parts:
        if p.shared:
            marked |= set(range(pos, pos + len(p.text)))
        pos += len(p.text)
    assert marked == covered(spans, len(CODE))


class _Panes(HTMLParser):
    """The text of each <pre> and the characters inside its <mark>s."""

    def __init__(self) -> None:
        super().__init__()
        self.panes: list[tuple[str, set[int]]] = []
        self._in_pre = self._in_mark = False

    def handle_starttag(self, tag, attrs):
        if tag == "pre":
            self._in_pre = True
            self.panes.append(("", set()))
        self._in_mark = self._in_mark or tag == "mark"

    def handle_endtag(self, tag):
        self._in_pre = self._in_pre and tag != "pre"
        self._in_mark = self._in_mark and tag != "mark"

    def handle_data(self, data):
        if self._in_pre:
            text, marks = self.panes[-1]
            if self._in_mark:
                marks |= set(range(len(text), len(text) + len(data)))
            self.panes[-1] = (text + data, marks)


def test_the_page_shows_each_file_once_from_backwards_and_overlapping_spans():
    pair = SimpleNamespace(a="alice", b="bob", score=0.9, a_share=0.9, b_share=0.8, tokens=40)
    a_spans = ((30, 4), (10, 20), (25, 45), (60, 200))  # backwards, overlapping, past the end
    b_spans = ((50, 40), (41, 44), (0, 3))
    detail = SimpleNamespace(pair=pair, a_code=CODE, b_code=CODE.upper(), a_spans=a_spans, b_spans=b_spans)
    parser = _Panes()
    parser.feed(render_similarity([detail], n_submissions=2, threshold=0.5, total=1))
    (a_text, a_marks), (b_text, b_marks) = parser.panes
    assert a_text == CODE and b_text == CODE.upper()  # every character once, in order
    assert a_marks == covered(a_spans, len(CODE)) and b_marks == covered(b_spans, len(CODE))
