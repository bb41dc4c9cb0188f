"""Hostile: does the lab, but prints bidi controls (U+202E, U+2066, U+061C), zero-width
characters (U+200B, U+2060) and a BOM at import and in every case, and raises an exception
whose message holds them in every fusion case.

Must get: no report (report.html, report.json, results.json, junit.xml, summary.html,
grades.csv) holds any of those characters; the fusion cases fail, every other case passes."""
import _honest_core
from _honest_core import *  # noqa: F401,F403

TRICK = "[hostile] \u202eevil\u2066 \u061c \u200bzero\u2060 \ufeffbom"
print(TRICK, flush=True)


def run_eager(ops, x):
    print(TRICK, flush=True)
    return _honest_core.run_eager(ops, x)


def fuse_elementwise(ops):
    raise ValueError(TRICK)
