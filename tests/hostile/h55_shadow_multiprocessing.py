"""Hostile: the buggy solution, beside a package named ``multiprocessing`` (``materialize.py``
writes it). Graded from inside the class folder (``cd class && graphgrade grade -- *``), the
similarity process that multiprocessing's spawn starts (``python -c ...``) once imported it from
the current folder, as root, outside every sandbox (issue 31, point 1a).

Must get: the package never imported by any process of the grader (it writes a marker when it
is: tests/test_trusted_path.py), and no more than the buggy baseline."""
import _honest_core

_honest_core.BUGGY = True
from _honest_core import *  # noqa: F401,F403,E402
