"""Hostile: in every fusion case, forges the grader's protocol: a result frame claiming
success for this case, a "status: exit 0" control frame, results for later cases and a
"ready" frame, then garbage; written to stdout and to every descriptor from 0 to 255,
before returning a correct value.

Must get: fusion cases fail (their result is malformed), no forged frame counts for
any case, every other case as the honest core's."""
import os

import _honest_core
import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403


def fuse_elementwise(ops):
    stream = kit.forged_stream(kit.case_uid())
    print(stream.decode("latin-1"), flush=True)
    hit = kit.write_every_fd(stream)
    print(f"[hostile] forged frames written to fds {hit}", flush=True)
    return _honest_core.fuse_elementwise(ops)
