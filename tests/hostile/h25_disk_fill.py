"""Hostile: does the lab, and in every fusion case writes 8 MiB files into its working
directory until refused or 256 MiB are written, to fill the grader's disk.

Must get: run as root, refused at the scratch size (a private tmpfs); it earns its
points honestly; nothing of it survives the run."""
import os

import _honest_core
from _honest_core import *  # noqa: F401,F403

BLOCK = b"\0" * (8 << 20)


def fuse_elementwise(ops):
    written = 0
    try:
        for i in range(32):
            with open(f"fill-{os.getpid()}-{i}.bin", "wb") as f:
                f.write(BLOCK)
            written += len(BLOCK)
    except OSError as exc:
        print(f"[hostile] disk refused after {written} bytes: {exc}", flush=True)
    print(f"[hostile] disk: wrote {written}", flush=True)
    return _honest_core.fuse_elementwise(ops)
