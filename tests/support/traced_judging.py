"""Judge one case of the shipped suite against a hand-written submission, in this process, with
the case's steps as a failed case's traced re-run marks them (grader.run.relocating): what the
first cause of that re-run names, without a worker."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from grader.judging.judge import judge_case
from grader.observe.interpreter import observe_in_process
from grader.run.relocating import traced
from support.shipped import shipped_suite

LOADED = shipped_suite()
CASES = {case.uid: case for case in LOADED.suite.cases}


def judged(folder: Path, source: str, uid: str, trace: bool = True):
    """(the case's verdict, the source's lines) with ``source`` as cudagraph.py in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cudagraph.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"traced_judging_{abs(hash(str(path)))}_{trace}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    case, oracle = CASES[uid], LOADED.oracles[uid]
    steps = traced(case).steps if trace else case.steps
    return judge_case(case, oracle, observe_in_process(module, uid, steps)), source.splitlines()


def line_of(lines: list[str], text: str) -> int:
    """The number of the first line holding ``text``."""
    return next(i for i, line in enumerate(lines, 1) if text in line)
