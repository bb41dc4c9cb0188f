"""Observing: what runs inside the untrusted worker, next to the submission.

``interpreter`` carries out a case's steps against a module exposing the student contract
and records what happened as plain data, sent back over :mod:`grader.observations`. It never
sees a check and never decides whether anything was right (that is :mod:`grader.judging`).

May import: the shared modules at grader/'s top level only. Nothing that holds a case's
checks or expected values (grader.suite's loader, grader.judging) is ever imported where
submission code runs.
"""
