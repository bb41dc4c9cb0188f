"""Judging and scoring, in the grader's own process: observations -> verdicts -> scores -> a report.

``judge`` compares a case's checks with the worker's observations (each check kind judges
itself, see :mod:`grader.suite.checks`); ``scoring`` splits the points and builds the
:class:`~grader.judging.results.Report`; ``results`` is that report's typed model,
``report_writing`` writes its versioned ``report.json`` and ``report_reading`` reads one back,
checked; ``integrity`` adds the staff-only integrity flags of a static scan.

May import: the shared modules at grader/'s top level, :mod:`grader.suite` (cases and their
checks) and :mod:`grader.run` (what a run returned). Never grader.observe (judging never runs
submission code), grader.commands or reports (renderers read results, not the reverse).
"""
