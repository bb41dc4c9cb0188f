"""Hostile: ``sys.exit(0)`` at import time, hoping the grader reads "exit 0" as "all passed".

Must get: score 0, every case an error naming the import, the batch unharmed."""
import sys

from _honest_core import *  # noqa: F401,F403

sys.exit(0)
