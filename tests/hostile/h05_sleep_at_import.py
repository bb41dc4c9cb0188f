"""Hostile: sleeps for an hour at import time.

Must get: an import timeout (not an hour), score 0, the batch unharmed."""
import time

from _honest_core import *  # noqa: F401,F403

time.sleep(3600)
