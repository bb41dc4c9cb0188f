"""``--isolation module``'s fresh state (grader.run.worker.inprocess), in a process of its own: what
a case changes, in the submission or around it, is gone when the next case's submission is
executed; what cannot be undone retires the worker."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SUBMISSION = """
import builtins, os, random, signal, sys
import numpy as np
import helper

class LaunchCounter:
    n = 0

helper.COUNT += 1
print("imported")  # shown once, at the first import
SEEN = (
    np.geterr()["divide"], float(np.random.random()), float(np.random.standard_normal()), random.random(),
    builtins.len is helper.REAL_LEN, np.geterrcall(), signal.getsignal(signal.SIGUSR1),
    np.get_printoptions()["precision"], os.getcwd(), os.environ.get("GG_TEST"), helper.COUNT,
    LaunchCounter.n, getattr(np, "allclose").__name__, sys.getrecursionlimit(), len(sys.path),
)

def mutate():
    LaunchCounter.n = 99
    helper.COUNT = 42
    np.seterr(divide="raise")
    np.seterrcall(print)
    signal.signal(signal.SIGUSR1, lambda *a: None)
    np.random.seed(7); random.seed(7); np.random.random(); random.random()
    np.random.randn()  # one of a pair drawn: the other waits in the legacy Gaussian cache
    name, key, pos, _, _ = np.random.get_state()
    np.random.set_state((name, key, pos, 1, 42.0))  # a cached Gaussian beside an unchanged generator
    builtins.len = lambda x: 0
    np.set_printoptions(precision=2)
    os.chdir("/")
    os.environ["GG_TEST"] = "changed"
    np.allclose = lambda *a, **k: True
    np.brand_new = 1
    sys.setrecursionlimit(123)
    sys.path.append("/nowhere")
"""

HELPER = """
REAL_LEN = len
COUNT = 0
"""

# Imports the submission in argv[1] as a module-mode worker does: `module`, and `fresh` to renew it.
WORKER_START = """
import dataclasses, os, sys, threading
from pathlib import Path
from grader.run.worker import inprocess, submission

root = Path(sys.argv[1])
box = {}
module = submission.import_submission(root, (), lambda: box.setdefault("fresh", inprocess.FreshSubmission((str(root),), "cudagraph")))
fresh = box["fresh"]
fresh.fds, fresh.spec = inprocess.open_fds(), module.__spec__
"""

DRIVER = (
    WORKER_START
    + """
first = module.SEEN
module.mutate()
again = fresh.fresh_module()
assert again is not module and again.helper is not module.helper, "the submission's modules are executed again"
assert again.SEEN == first, (again.SEEN, first)
import numpy as np
assert not hasattr(np, "brand_new") and np.allclose.__name__ == "allclose"
# where the interpreter tags its dicts (CPython up to 3.13), untouched namespaces are recognised by
# their tag: a second round of changes, after the first was undone, is still found and undone
assert fresh.versions is not None or sys.version_info >= (3, 14)
assert fresh.np_random.fast is not None  # numpy's random state put back without set_state (numpy 2)
again.mutate()
third = fresh.fresh_module()
assert third.SEEN == first, (third.SEEN, first)
assert not hasattr(np, "brand_new") and np.allclose.__name__ == "allclose"
assert fresh.lasting_damage() == ""
threading.Thread(target=lambda: __import__("time").sleep(2), daemon=True).start()
assert fresh.lasting_damage() == "a thread left running"
print("OK")
"""
)


def test_every_case_gets_a_fresh_submission_and_a_restored_process(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "cudagraph.py").write_text(SUBMISSION)
    (sub / "helper.py").write_text(HELPER)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(DRIVER), str(sub)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["imported", "OK"]  # the re-execution printed nothing


GENERATED = """
import collections, dataclasses

@dataclasses.dataclass(frozen=True)
class Entry:
    shape: tuple
    launches: int = 0

Pair = collections.namedtuple("Pair", "a b")
MADE = (Entry((2, 3)), repr(Entry((1,), 4)), Entry((1,)) == Entry((1,)), Pair(1, b=2), Pair._make([3, 4]).b)

def sabotage():
    del dataclasses.exec  # the worker's cache: the next case's dataclasses get it back
"""

GENERATED_DRIVER = (
    WORKER_START
    + """
compiled = inprocess._compiled.cache_info().currsize
assert compiled >= 3, compiled  # __init__, __repr__, __eq__, ... of Entry; Pair's __new__
again = fresh.fresh_module()
assert again.Entry is not module.Entry and again.Pair is not module.Pair, "fresh classes for every case"
assert inprocess._compiled.cache_info().currsize == compiled, "nothing compiled again"
assert again.Entry.__init__.__code__ is module.Entry.__init__.__code__  # the same code, new functions
assert again.Entry.__init__ is not module.Entry.__init__
assert repr(again.MADE) == repr(module.MADE), (again.MADE, module.MADE)
assert again.MADE[1] == "Entry(shape=(1,), launches=4)" and again.MADE[2] is True and again.MADE[4] == 4
try:
    again.Entry((1,)).shape = (2,)
except dataclasses.FrozenInstanceError:
    pass
else:
    raise AssertionError("frozen")
again.sabotage()
third = fresh.fresh_module()
assert repr(third.MADE) == repr(module.MADE)
assert dataclasses.exec is inprocess._exec_compiled_once
# exec and eval of a text given no namespaces run in their caller's, as the builtins do
def caller():
    local = 2
    return inprocess._eval_compiled_once("local * 3"), inprocess._eval_compiled_once("__name__")
assert caller() == (6, "__main__"), caller()
print("OK")
"""
)


def test_generated_methods_are_compiled_once_and_classes_stay_fresh(tmp_path):
    """dataclasses and namedtuple compile the source text they write once per worker: each case
    still gets new classes with the same behaviour, and a case that removes the cache does not
    take it from the next."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "cudagraph.py").write_text(GENERATED)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(GENERATED_DRIVER), str(sub)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["OK"]
