"""Hostile: ``sys.exit(0)`` (and ``raise SystemExit``) inside a contract call.

Must get: every fusion case fails (the step raised SystemExit), every other case
graded as the honest core's; later cases are unaffected."""
import sys

from _honest_core import *  # noqa: F401,F403


def fuse_elementwise(ops):
    print("[hostile] leaving with exit code 0 mid-case", flush=True)
    sys.exit(0)
