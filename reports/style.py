"""The pages' inline assets: the CSS of ``templates/_style.css.j2`` (graphgrade's own file)
without comments, spare whitespace or the rules for classes the page does not use, and the icon
sprite without the icons the page does not show.

A page carries its CSS inline (no network, no second file to lose), so on a student's page it is
a fifth of the bytes; most of it styles things another page has (the class summary's tables, the
launch picture, a crash's output). A page is rendered with :data:`MARKER` where its CSS goes, and
:func:`with_style` puts in the rules it needs: a rule stays when, for one of its selectors,
every class the selector names is on the page (a selector naming no class always stays). The
pages have no scripts, so the classes in the HTML are all the classes there will ever be.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from markupsafe import Markup

STYLE_FILE = Path(__file__).resolve().parent / "templates" / "_style.css.j2"
MARKER = Markup("/* graphgrade: the page's CSS */")

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_CLASS_IN_SELECTOR = re.compile(r"\.(-?[A-Za-z_][\w-]*)")
_SYMBOL = re.compile(r'<symbol id="(i-[\w-]+)".*?</symbol>\n?', re.S)  # see _macros.html.j2: sprite()

Rule = tuple[str, tuple[frozenset[str], ...], str]  # (selector text, classes per selector, body)
Block = tuple[str, tuple[Rule, ...]]  # ("" or an @media prelude, its rules)


def _tight(body: str) -> str:
    """A declaration block's text with no spare whitespace (only declarations: a selector's
    spaces mean something)."""
    return re.sub(r"\s*([;:,])\s*", r"\1", body.strip()).rstrip(";")


def _rules(text: str) -> tuple[Rule, ...]:
    out: list[Rule] = []
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", text):
        selector = " ".join(selector.split())
        parts = tuple(frozenset(_CLASS_IN_SELECTOR.findall(p)) for p in selector.split(","))
        out.append((selector.replace(", ", ","), parts, _tight(body)))
    return tuple(out)


@lru_cache(maxsize=1)
def blocks() -> tuple[Block, ...]:
    """The stylesheet as top-level rule runs and ``@media`` blocks, in file order."""
    css = _COMMENT.sub("", STYLE_FILE.read_text(encoding="utf-8"))
    out: list[Block] = []
    pos = 0
    for m in re.finditer(r"@media[^{]*\{", css):
        if m.start() < pos:
            continue
        out.append(("", _rules(css[pos : m.start()])))
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(css[i], 0)
            i += 1
        out.append((" ".join(m.group(0)[:-1].split()), _rules(css[m.end() : i - 1])))
        pos = i
    out.append(("", _rules(css[pos:])))
    return tuple(b for b in out if b[1])


def page_classes(html: str) -> frozenset[str]:
    """The classes of every ``class="..."`` on the page (not of ``data-subclass="..."``). Split
    on the literal rather than searched for with a leading ``\\b``, which keeps the engine
    from looking for the literal first (8x slower on a staff page)."""
    values = []
    pieces = html.split('class="')
    for before, piece in zip(pieces, pieces[1:]):
        if before and (before[-1].isalnum() or before[-1] == "_"):
            continue
        value, closed, _ = piece.partition('"')
        if closed:
            values.append(value)
    return frozenset(" ".join(values).split())


@lru_cache(maxsize=64)  # a class's pages use a few sets of classes between them
def css_for(classes: frozenset[str]) -> str:
    """The rules a page with these classes needs, minified, in file order."""
    out: list[str] = []
    for media, rules in blocks():
        kept = "".join(f"{sel}{{{body}}}" for sel, parts, body in rules if any(p <= classes for p in parts))
        if kept:
            out.append(f"{media}{{{kept}}}" if media else kept)
    return "\n".join(out)


def with_style(html: str) -> str:
    """A rendered page with its CSS where :data:`MARKER` stands, and only the icons it uses."""
    html = _SYMBOL.sub(lambda m: m.group(0) if f'href="#{m.group(1)}"' in html else "", html)
    return html.replace(MARKER, css_for(page_classes(html)), 1)
