"""Hostile: ``os._exit(0)`` inside a contract call: no exception, no report, exit code 0.

Must get: every fusion case crashed (no result), every other case as the honest core's."""
import os

from _honest_core import *  # noqa: F401,F403


def fuse_elementwise(ops):
    os._exit(0)
