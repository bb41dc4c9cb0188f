"""Hostile: the buggy solution, plus a forgery the scan cannot read: ``helpers.zip`` beside
``cudagraph.py`` (``materialize.py`` writes it) holds ``_forged.py``, which reaches the core
through ``sys.modules`` and turns it into the correct build. This module puts the zip on
``sys.path`` and imports it (zipimport). Unguarded it scored as the honest build, with no flag.

Must get: the zip flagged (``compiled-code``), its code not importable (it says so in its own
output), and no more than the buggy baseline."""
import os
import sys

import _honest_core

_honest_core.BUGGY = True
from _honest_core import *  # noqa: F401,F403,E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers.zip"))
try:
    import _forged  # noqa: F401 - only in the zip
except ImportError as exc:
    print(f"[hostile] zip import: refused ({type(exc).__name__})", flush=True)
else:
    print("[hostile] zip import: WORKED", flush=True)
