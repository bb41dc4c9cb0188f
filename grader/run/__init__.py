"""Running: each submission in isolated, sandboxed worker processes; observations come back.

``runner`` is the grader's side: it asks the zygote for a confined worker per submission,
sends each case's steps (never its checks) and reads the observation frames back within
deadlines. ``worker/`` is the other side: the zygote, the sandbox, cgroups, sandbox uids, the
submission worker and its in-process mode. ``copying`` copies a submission into scratch space
within bounds; ``cache`` keeps observations so that a regrade runs nothing.

May import: the shared modules at grader/'s top level and :mod:`grader.observe` (a worker
runs the interpreter). Never grader.suite, grader.judging or grader.commands: the worker side
holds a case's steps, never its checks.
"""
