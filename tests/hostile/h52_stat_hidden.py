"""Hostile: an honest solution that asks ``stat`` (which needs no Landlock right) for the size and
modification time of the spec files, the reference solution and the repository's files beside
the grader package, by the names they have in a checkout, and prints what it learns into its own
visible output.

Must get: nothing (every name covered in the worker's mount namespace, as root), exactly the
honest score (tests/test_isolation_channels.py)."""
import os

import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403

SPEC_NAMES = (
    "01_launch_counter.yaml",
    "04_static_buffer.yaml",
    "05_single_launch_replay.yaml",
    "09_fusion.yaml",
    "10_state_machine.yaml",
)


def _look():
    root = kit.grader_source_root()
    if not root:
        print("[hostile] stat: no grader package found", flush=True)
        return
    names = [os.path.join(root, "specs", n) for n in SPEC_NAMES]
    names += [os.path.join(root, "reference", "cudagraph.py"), os.path.join(root, "README.md")]
    leaked = []
    for path in names:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if st.st_size:
            leaked.append(f"{path} size {st.st_size} mtime {st.st_mtime_ns}")
    if leaked:
        print(f"[hostile] stat LEAK {leaked}", flush=True)
    else:
        print(f"[hostile] stat: found nothing of {len(names)} names", flush=True)
    for folder in ("specs", "reference"):
        ok, listing = kit.attempt(f"list {folder}", os.listdir, os.path.join(root, folder))
        if ok and listing:
            print(f"[hostile] stat LEAK {folder} lists {sorted(listing)[:5]}", flush=True)


_look()
