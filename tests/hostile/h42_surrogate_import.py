"""Hostile: fails to import with a message holding a lone surrogate (which cannot be encoded
as UTF-8: printing it raised UnicodeEncodeError in the grader's progress line).

Must get: zero; the batch goes on, every other submission is graded, summary.html and
grades.csv are written, exit status 0."""

raise RuntimeError("cannot import \ud800 here")
