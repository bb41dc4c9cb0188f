"""Hostile: the buggy solution, beside its own ``reference.py``, ``specs.py`` and ``grader/``
(``materialize.py`` writes them). The Gradescope bundle's ``run_autograder``, started from the
submission's folder, ran ``python3 -c "import os, reference"`` and imported the student's
``reference.py`` and ``specs.py`` as root (issue 31, point 1b).

Must get: none of them imported by any process of the grader (each writes a marker when it
is: tests/test_trusted_path.py, tests/test_bundle_end_to_end.py), and no more than the buggy
baseline."""
import _honest_core

_honest_core.BUGGY = True
from _honest_core import *  # noqa: F401,F403,E402
