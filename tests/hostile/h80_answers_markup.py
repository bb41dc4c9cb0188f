"""Hostile: the honest core, with an answers.md (``materialize.py`` writes it) whose free text
and citations hold markup, a spreadsheet formula, terminal escapes, a NUL, a bidi override and
a carriage return, to break out of the report pages and answers.csv or to forge a row there.

Must get: the honest score but the notebook answers (its citations are not lines that do the work),
every page showing the text escaped and inert, answers.csv one row per slot with the formula
disarmed (tests/test_answers_reports.py)."""

from _honest_core import *  # noqa: F401,F403
