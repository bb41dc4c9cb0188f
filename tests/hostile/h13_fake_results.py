"""Hostile: does the lab, and writes fake results.json / report.json (score 100) into
its working directory, its own directory, the folders above, the --out folder found on
the grader's command line, the installed package folders (site-packages, grader/,
specs/, reference/) and /tmp, at import and in every fusion case.

Must get: its honestly earned score, and none of those files anywhere outside its
sandbox (the grader writes OUT/<name>/results.json itself, from its own verdicts)."""
import _honest_core
import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403

print("[hostile] wrote at import:", kit.write_everywhere("import"), flush=True)


def fuse_elementwise(ops):
    print("[hostile] wrote in a case:", kit.write_everywhere("case"), flush=True)
    return _honest_core.fuse_elementwise(ops)
