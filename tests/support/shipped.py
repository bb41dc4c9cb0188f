"""The shipped spec suite, loaded once per test session.

Loading the ten spec files takes about a second and a half (PyYAML's pure-Python parser, with
line marks); a dozen test modules read the same suite, so they share one load. A LoadedSuite
is frozen: nothing a test does with it changes what the next test sees.
"""

from __future__ import annotations

import functools
from pathlib import Path

from grader.suite.loader import LoadedSuite, load_suite

SPECS = Path(__file__).resolve().parents[2] / "specs"


@functools.cache
def shipped_suite() -> LoadedSuite:
    return load_suite(SPECS)
