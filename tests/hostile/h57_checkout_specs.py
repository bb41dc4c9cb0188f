"""Hostile: the buggy solution, beside a ``specs/`` folder of one easy case and a
``pyproject.toml`` naming graphgrade (``materialize.py`` writes them). Run inside such a
folder, every command without ``--specs`` took it for a checkout and graded against the
student's own specs: the untouched template scored 100, and so did the image's
``run_autograder`` started from the submission's folder (issue 31, point 1c).

Must get: graded against the course's specs, never the folder's (tests/test_trusted_path.py),
and no more than the buggy baseline."""
import _honest_core

_honest_core.BUGGY = True
from _honest_core import *  # noqa: F401,F403,E402
