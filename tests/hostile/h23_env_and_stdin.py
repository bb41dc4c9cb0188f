"""Hostile: does the lab, and looks for the grader's secrets and input: prints its
environment, /proc/self/environ and its parent's, scans its own memory (a fork shares its
parent's) for the grader's environment, and reads stdin (the test keeps the grader's
stdin open: an inherited stdin would block here until the import timeout).

Must get: its honestly earned score (stdin is /dev/null), and the test's canary variable
nowhere in its output."""
import os
import sys

import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403

NEEDLE = ("GRAPHGRADE_HOSTILE_" + "CANARY=").encode()


def _scan_memory():
    hits = []
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb") as mem:
        for line in maps:
            fields = line.split()
            if not fields[1].startswith("r") or (len(fields) > 5 and fields[5].startswith("[v")):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if end - start > 256 << 20:
                continue
            try:
                mem.seek(start)
                chunk = mem.read(end - start)
            except OSError:
                continue
            at = chunk.find(NEEDLE)
            while at >= 0 and len(hits) < 20:
                hits.append(chunk[at: at + 80].decode(errors="replace"))
                at = chunk.find(NEEDLE, at + 1)
    return hits


print("[hostile] environ:", dict(os.environ), flush=True)
for path in ("/proc/self/environ", f"/proc/{os.getppid()}/environ"):
    ok, text = kit.attempt(f"read {path}", lambda p=path: open(p, "rb").read().replace(b"\0", b"\n").decode(errors="replace"))
    if ok:
        print(text, flush=True)
ok, hits = kit.attempt("scan own memory", _scan_memory)
print("[hostile] memory hits:", hits, flush=True)
ok, data = kit.attempt("read stdin", sys.stdin.read)
print("[hostile] stdin gave:", repr(data)[:200], flush=True)
