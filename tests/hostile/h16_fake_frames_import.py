"""Hostile: forges protocol frames at import time, in the worker itself (which holds the
grader's pipes): "ready", results claiming success for several cases, "status: exit 0",
then garbage, to every descriptor from 0 to 255.

Must get: score 0 (the forged results are for cases not asked, or malformed, and the
worker is replaced each time), and nobody else affected."""
import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403

stream = kit.control_frame("ready") + kit.forged_stream("launch-counter-basics/reset-sets-zero")
kit.write_every_fd(stream)
