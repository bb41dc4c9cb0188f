"""Hostile: a buggy solution that tries to replace itself with the reference solution:
``import reference``, the same after putting site-packages and the grader's source root
on sys.path, and importlib from the reference's file path. If any works, it re-exports
the reference's names (full marks for free).

Must get: no more than the buggy baseline (the reference is neither importable nor
readable from the sandbox)."""
import importlib
import importlib.util
import os
import sys

import _honest_core
import _hostile_kit as kit

_honest_core.BUGGY = True
from _honest_core import *  # noqa: F401,F403,E402

NAMES = ("LaunchCounter", "run_eager", "GraphEntry", "GraphRunner", "PiecewiseGraphRunner", "fuse_elementwise", "StepMode", "InferenceGraphCapture")


def _from_file(path):
    spec = importlib.util.spec_from_file_location("stolen_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _steal():
    ok, mod = kit.attempt("import reference.cudagraph", importlib.import_module, "reference.cudagraph")
    if ok:
        return mod
    root = kit.grader_source_root()
    for extra in (kit.site_packages(), root):
        if extra:
            sys.path.insert(0, extra)
    sys.modules.pop("reference", None)
    ok, mod = kit.attempt("import reference.cudagraph (sys.path hack)", importlib.import_module, "reference.cudagraph")
    if ok:
        return mod
    for path in [os.path.join(root or "/", "reference", "cudagraph.py"), os.path.join(kit.site_packages(), "reference", "cudagraph.py")]:
        ok, mod = kit.attempt(f"load {path}", _from_file, path)
        if ok:
            return mod
    return None


_stolen = _steal()
if _stolen is not None:
    print("[hostile] STOLE the reference", flush=True)
    globals().update({name: getattr(_stolen, name) for name in NAMES if hasattr(_stolen, name)})
