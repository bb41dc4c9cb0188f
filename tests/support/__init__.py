"""Helpers and data shared by several test modules (not tests themselves).

``tests/`` is on ``sys.path`` while the suite runs (pytest's rootdir import mode), so a test
imports these as ``from support.spec_text import load_case``. ``solutions/`` holds lab
solutions the tests grade, as files; ``strict_cupy/`` is the CPU stand-in for CuPy.
"""
