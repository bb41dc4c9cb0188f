"""Hostile: a buggy solution that hunts for the spec files (the hidden cases): the
installed ``specs`` package, the folder next to the grader package, the --specs folder
on the grader's command line, globs of likely paths, /proc/<pid>/root and /proc/self/root
detours, /proc/<pid>/cwd, the grader's memory (/proc/<pid>/mem); then prints whatever it
found and puts it in the error message of every fusion case (visible in the report).

Must get: no more than the buggy baseline, and no spec text (the canary in the test's
spec copy, the YAML source of any spec) anywhere in its report or output."""
import glob
import importlib
import os
import sys

import _honest_core
import _hostile_kit as kit

_honest_core.BUGGY = True
from _honest_core import *  # noqa: F401,F403,E402

found = []


def _read(path):
    with open(path, "rb") as f:
        return f.read(4000).decode(errors="replace")


def _hunt():
    dirs = list(kit.option_values("--specs"))
    root = kit.grader_source_root()
    if root:
        dirs += [os.path.join(root, "specs"), f"/proc/self/root{root}/specs", f"/proc/{os.getppid()}/root{root}/specs"]
    for pid in kit.grader_pids():
        dirs += [f"/proc/{pid}/cwd/specs", f"/proc/{pid}/root/work/main/specs"]
    dirs += ["/autograder/source/specs", "/grader/specs", "specs", "../specs", "../../specs"]
    dirs += glob.glob("/tmp/pytest-of-*/pytest-*/*/specs*") + glob.glob("/tmp/*/specs*")
    ok, mod = kit.attempt("import specs", importlib.import_module, "specs")
    if ok and getattr(mod, "__file__", None):
        dirs.append(os.path.dirname(mod.__file__))
    sys.path.append(kit.site_packages())
    if root:
        sys.path.append(root)
    ok, mod = kit.attempt("import specs (sys.path hack)", importlib.import_module, "specs")
    if ok and getattr(mod, "__file__", None):
        dirs.append(os.path.dirname(mod.__file__))
    for d in dirs:
        ok, names = kit.attempt(f"listdir {d}", os.listdir, d)
        names = names if ok else ["01_launch_counter.yaml", "02_eager.yaml", "10_state_machine.yaml"]
        for name in names:
            if name.endswith(".yaml"):
                ok, text = kit.attempt(f"read {d}/{name}", _read, os.path.join(d, name))
                if ok:
                    found.append(text)
        for path in glob.glob(os.path.join(d, "*.yaml")):
            ok, text = kit.attempt(f"read {path}", _read, path)
            if ok:
                found.append(text)
    for pid in kit.grader_pids():  # the grader holds the loaded specs in its memory
        def peek(pid=pid):
            with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
                for line in maps:
                    start, end = (int(x, 16) for x in line.split()[0].split("-"))
                    if "rw" in line.split()[1]:
                        mem.seek(start)
                        chunk = mem.read(min(end - start, 1 << 20))
                        at = chunk.find(b"visibility")
                        if at >= 0:
                            return chunk[max(0, at - 500): at + 500].decode(errors="replace")
            return ""
        ok, text = kit.attempt(f"read memory of {pid}", peek)
        if ok and text:
            found.append(text)


_hunt()
LEAK = "\n".join(found)[:1800] or "nothing found"
print("[hostile] leaked:", LEAK, flush=True)


def fuse_elementwise(ops):
    print("[hostile] leaked:", LEAK, flush=True)
    raise RuntimeError("LEAK " + LEAK)
