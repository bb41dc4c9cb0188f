"""Shared test fixtures."""

import os
import sys
from pathlib import Path

from grader.run.worker.sandbox import SINGLE_THREADED  # imports no numpy

# One BLAS thread in the test processes and what they start (set before numpy loads, below), as
# the sandboxed workers and `graphgrade` itself run: OpenBLAS's thread pool spins while it waits;
# with two CPU hogs running, gpu-check's GPU-test step took 87 s with the default pool and 11 s
# with one thread. A value already set wins.
for _name, _value in SINGLE_THREADED.items():
    os.environ.setdefault(_name, _value)

# Every report.json the suite writes, here and in every `graphgrade` it starts, is checked
# against the published schema (grader.judging.report_schema; tests/test_verdict_records.py).
os.environ["GRAPHGRADE_REPORT_SCHEMA"] = str(Path(__file__).resolve().parents[1] / "docs" / "report.schema.json")

import pytest  # noqa: E402

import reference.cudagraph as reference_module  # noqa: E402


@pytest.fixture(autouse=True)
def _leave_the_reference_launch_counter_as_found():
    """Some tests run the reference in this process; its class-level LaunchCounter.n must not
    leak from one test into another (test_template_contract checks a fresh counter)."""
    before = reference_module.LaunchCounter.n
    yield
    reference_module.LaunchCounter.n = before


STRICT_CUPY = Path(__file__).resolve().parent / "support" / "strict_cupy"


def _cupy_modules() -> dict:
    return {name: mod for name, mod in sys.modules.items() if name == "cupy" or name.startswith("cupy.")}


@pytest.fixture
def strict_cupy(monkeypatch):
    """``import cupy`` gives the strict CPU stand-in (tests/support/strict_cupy) for one test.

    A fresh copy each time (no capture state leaks between tests); the device
    caches of the grader's ops and of reference.cuda are emptied before and
    after, since they hold arrays of one copy of the stand-in.
    """
    from support.lab_ops import ops as lab_ops

    import reference.cuda
    import reference.device_ops

    saved = _cupy_modules()
    for name in saved:
        del sys.modules[name]
    monkeypatch.syspath_prepend(str(STRICT_CUPY))
    lab_ops._DEVICE_WEIGHTS.clear()
    reference.device_ops._KERNELS.clear()
    import cupy

    assert getattr(cupy, "__standin__", False), "the strict stand-in was not the cupy imported"
    try:
        yield cupy
    finally:
        lab_ops._DEVICE_WEIGHTS.clear()
        reference.device_ops._KERNELS.clear()
        for name in _cupy_modules():
            del sys.modules[name]
        sys.modules.update(saved)


@pytest.fixture(autouse=True, scope="session")
def _private_observation_cache(tmp_path_factory):
    """``graphgrade grade`` caches observations in the user's cache folder by default; tests
    (and the graders they start) use a folder of their own."""
    import os

    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(autouse=True, scope="session")
def _remove_deep_trees():
    """The deep-folders hostile submission nests 1,500 folders; shutil.rmtree (pytest's clean-up
    of old temporary folders) recurses per level and fails on it, so remove them here, iteratively."""
    yield
    materialize = sys.modules.get("materialize")
    if materialize is not None:
        from grader.run.copying import remove_tree

        for tree in materialize.DEEP_TREES:
            remove_tree(tree)


@pytest.fixture(scope="session")
def shipped_audit(tmp_path_factory):
    """``graphgrade audit --json --html`` on the shipped specs, run once per test session.

    The audit grades the reference, every mutant and every baseline through the isolated
    path: the most expensive single command in the suite. Every test about the shipped
    suite's audit (the kill matrix, the baselines, the HTML page, what removing one spec
    would leave alive) reads this one run instead of grading it again.
    """
    import json
    import subprocess
    from types import SimpleNamespace

    root = Path(__file__).resolve().parents[1]
    html = tmp_path_factory.mktemp("shipped-audit") / "audit.html"
    proc = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "audit", "--json", "--html", str(html), "--jobs", "2"],
        check=False,
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=root,
    )
    assert proc.stdout, proc.stderr
    return SimpleNamespace(proc=proc, data=json.loads(proc.stdout), html=html)


# Module- or session-scoped fixtures that grade many submissions end to end, build an install,
# or drive Chromium: every test that uses one is marked slow (pyproject's addopts leaves slow
# tests out of a plain `pytest`; the README's command and CI pass -m "" to run them).
SLOW_FIXTURES = frozenset(
    {
        "shipped_audit",  # the audit of the shipped suite: every mutant and baseline graded
        "verdicts",  # test_isolation_modes: everything graded in both isolation modes
        "root_batch",  # test_hostile: the hostile batch, as root
        "class_run",  # test_grade_engine: a class of twelve submissions
        "cold",  # test_cache: a cold run, then regrades
        "half_done",  # test_feedback: a half-done lab graded on every spec
        "built_kit",  # test_bundles: the student kit built
        "graded",  # test_correct_variants, test_hidden_one_bit, test_accessibility: graded batches
        "rendered",  # test_reports_browser: pages in Chromium
        "full",  # test_install: a fresh venv with a plain install
        "kit_venv",  # test_install: a fresh venv with the kit installed
    }
)


# The test files that cost the most CPU (measured with the whole suite: each grades a large
# batch), collected first, so that pytest-xdist (pyproject's addopts: two workers, a file kept
# whole on one) starts them at once and the many short files fill in behind them; collected
# last, one of them would be a long tail with the other worker idle. (With
# --no-loadscope-reorder, xdist gives each worker the next file in this order whenever it runs
# short of work. CPU seconds in the comments, from one whole run on the 2-core VM.)
HEAVY_FIRST = (
    "test_isolation_modes.py",  # 90: every submission under tests/ graded in both isolation modes
    "test_audit.py",  # 65: the shipped audit (every mutant and baseline graded)
    "test_hostile.py",  # 56: the hostile batch
    "test_grade_engine.py",  # 32
    "test_cache.py",  # 20
    "test_install.py",  # 19: fresh venvs and pip installs
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark slow every test that uses a fixture of SLOW_FIXTURES (before -m selects), and put
    the files of HEAVY_FIRST first (otherwise in the order collected)."""
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(HEAVY_FIRST)))  # stable
