"""The trusted side never runs a student's file (issue 31, point 1).

Every process graphgrade starts outside the sandbox (the grader, the similarity process that
multiprocessing's spawn starts, the worker zygote, the report writers it forks) imports nothing
from the current folder or from a submission, and a folder that merely looks like a checkout
(``specs/`` beside a ``pyproject.toml`` naming graphgrade) never lends its specs. Each planted
file (tests/hostile/materialize.py, ``SHADOW_SOURCE``) leaves a marker if it is ever imported.

The grader runs here as users run it: the installed console script, in the folder named.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hostile"))
from materialize import markers_of, materialize, plant_shadow  # noqa: E402

GRAPHGRADE = Path(sys.executable).parent / "graphgrade"  # the installed console script
SHADOWS = ("h55_shadow_multiprocessing", "h56_shadow_reference", "h57_checkout_specs")
OWN_FILES = {"cudagraph", "_honest_core", "_hostile_kit"}

pytestmark = pytest.mark.skipif(not GRAPHGRADE.is_file(), reason="graphgrade's console script is not installed here")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH") and "PYTEST" not in k}
    return {**env, "HOME": "/tmp", **extra}


def _graphgrade(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(GRAPHGRADE), *args], cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=600
    )


def _shipped_cases() -> int:
    from grader.commands.spec_source import bundled_specs_dir
    from grader.suite.loader import load_suite

    return len(load_suite(bundled_specs_dir()).suite.cases)


def _class_folder(tmp_path: Path) -> Path:
    """The class as an instructor downloads it: one folder per student, among them one named
    ``multiprocessing`` (a package: its ``__init__.py`` is a shadow) and h55-h57."""
    klass = tmp_path / "class"
    made = materialize(klass, list(SHADOWS))
    shutil.copytree(made["h55_shadow_multiprocessing"], klass / "multiprocessing", dirs_exist_ok=True)
    plant_shadow(klass, "multiprocessing", markers_of(klass / "multiprocessing"), package=True)
    return klass


def _markers(base: Path) -> list[str]:
    folder = base / "shadow-markers"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_grading_from_inside_the_class_folder_imports_no_students_file(tmp_path):
    """h55, h56: ``cd class && graphgrade grade -- *`` (the similarity pass included)."""
    klass = _class_folder(tmp_path)
    names = sorted(p.name for p in klass.iterdir())
    done = _graphgrade("grade", "--out", str(tmp_path / "out"), "--no-cache", "--", *names, cwd=klass)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _markers(tmp_path) == [] and "SHADOW-IMPORTED" not in done.stdout + done.stderr
    assert (tmp_path / "out" / "similarity.html").is_file()  # the spawned comparison ran, and finished
    buggy = json.loads((tmp_path / "out" / "buggy" / "report.json").read_text())
    for name in (*SHADOWS, "multiprocessing"):
        report = json.loads((tmp_path / "out" / name / "report.json").read_text())
        assert len(report["cases"]) == _shipped_cases()  # the course's specs, never h57's own
        assert report["score"] <= buggy["score"] < report["max_score"], name


def test_a_folder_that_looks_like_a_checkout_lends_no_specs(tmp_path):
    """h57: run inside a submission holding specs/ beside a pyproject.toml naming graphgrade."""
    klass = tmp_path / "class"
    folder = materialize(klass, ["h57_checkout_specs"])["h57_checkout_specs"]
    for command in (["validate"], ["grade", ".", "--out", str(tmp_path / "out"), "--no-cache"]):
        done = _graphgrade(*command, cwd=folder)
        assert "(this checkout's specs/)" not in done.stderr and str(folder) + "/specs" not in done.stderr
        assert "(the suite installed with graphgrade)" in done.stderr, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "h57_checkout_specs" / "report.json").read_text())
    assert len(report["cases"]) == _shipped_cases() and report["score"] < report["max_score"]


def test_the_images_run_autograder_from_the_submission_folder_takes_its_own_specs(tmp_path):
    """h57 under deploy/run_autograder, started in the submission's folder: the image's specs
    ($GRAPHGRADE_SPECS here, as in the with-specs image), never the folder's."""
    root = tmp_path / "autograder"
    made = materialize(root / "subs", ["h57_checkout_specs"])["h57_checkout_specs"]
    shutil.copytree(made, root / "submission")
    specs = tmp_path / "image-specs"
    specs.mkdir()
    shutil.copy(REPO / "specs" / "02_eager.yaml", specs)
    env = _env(PATH=f"{GRAPHGRADE.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}", GRAPHGRADE_SPECS=str(specs))
    done = subprocess.run(
        ["bash", str(REPO / "deploy" / "run_autograder"), "--root", str(root)],
        cwd=root / "submission",
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text())
    assert len(results["tests"]) == 10  # 02_eager's cases, never the folder's one case worth 100
    assert not any("student's own" in t["name"] for t in results["tests"]) and results["score"] <= 10


# ------------------------------------------------------------------ the sweep
SITECUSTOMIZE = """import atexit, os, sys
_DUMPS = {dumps!r}


def _dump():
    try:
        os.makedirs(_DUMPS, exist_ok=True)
        with open(os.path.join(_DUMPS, "%d.txt" % os.getpid()), "w") as f:
            f.write(" ".join(sys.argv) + "\\n" + "\\n".join(sorted(sys.modules)))
    except OSError:
        pass


_real_exit = os._exit


def _exit(code):
    _dump()
    _real_exit(code)


os._exit = _exit
atexit.register(_dump)
"""


def _trusted_module_names(tmp_path: Path, subs: list[Path]) -> tuple[set[str], list[set[str]]]:
    """Grade ``subs`` with a hook that dumps each trusted process's sys.modules as it ends (the
    grader, the similarity process, the zygote, the report writers; a sandboxed worker cannot
    write the dump); returns the top-level names, and each process's modules and arguments."""
    hook = tmp_path / "hook"
    hook.mkdir()
    dumps = tmp_path / "dumps"
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE.format(dumps=str(dumps)))
    out = tmp_path / "out-dump"
    done = _graphgrade(
        "grade",
        *map(str, subs),
        "--out",
        str(out),
        "--no-cache",
        "--jobs",
        "2",
        cwd=tmp_path,
        env=_env(PYTHONPATH=str(hook)),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    names: set[str] = set()
    processes = []
    for dump in sorted(dumps.glob("*.txt")):
        command, *modules = dump.read_text().splitlines()
        processes.append({*modules, *command.split()})
        names |= {m.split(".")[0] for m in modules}
    return names, processes


SHADOWS_PER_RUN = 120  # module names planted per grading run (see the sweep's batches)


def test_sweep_no_module_a_trusted_process_imports_may_come_from_the_cwd_or_a_submission(tmp_path):
    """For every top-level module name the trusted processes import (read at run time from their
    sys.modules), a same-named file in the current folder and in every submission: none runs."""
    base = tmp_path / "dump"
    base.mkdir()
    subs = materialize(base / "subs", [])
    names, processes = _trusted_module_names(base, [subs["honest"], subs["buggy"]])
    seen = {
        "the similarity process": "grader.commands.similarity_compare",
        "the zygote": str(REPO / "grader" / "run" / "worker" / "zygote.py"),
        "the grader": "grader.commands.cli",
    }
    for what, module in seen.items():
        assert any(module in p for p in processes), f"{what} left no dump"
    assert {"grader", "multiprocessing", "pickle", "json", "numpy", "jinja2"} <= names
    # reference and specs are found without being imported (importlib.util.find_spec): swept too
    swept = sorted((names | {"reference", "specs"}) - OWN_FILES - {"sitecustomize", "__main__", "__mp_main__"})
    (tmp_path / "swept-modules.txt").write_text("\n".join(swept) + "\n")
    print(f"the sweep covered {len(swept)} module names: {' '.join(swept)}")

    # in batches: a submission holding a shadow of every name at once would pass the bound on a
    # submission's files (copying.MAX_SUBMISSION_FILES), and be refused whole before any import
    for batch, start in enumerate(range(0, len(swept), SHADOWS_PER_RUN)):
        names_now = swept[start : start + SHADOWS_PER_RUN]
        klass, out = tmp_path / f"class-{batch}", tmp_path / f"out-{batch}"
        made = materialize(klass, [])
        for name in names_now:
            plant_shadow(klass, name, markers_of(made["honest"]))
            for folder in made.values():
                plant_shadow(folder, name, markers_of(folder))
        done = _graphgrade("grade", "honest", "buggy", "--out", str(out), "--no-cache", "--jobs", "2", cwd=klass)
        assert done.returncode == 0, done.stderr[-3000:]
        assert _markers(tmp_path) == [] and "SHADOW-IMPORTED" not in done.stdout + done.stderr
        assert f"specs: {(REPO / 'specs').resolve()} (the suite installed with graphgrade)" in done.stderr
        assert (out / "similarity.html").is_file()
        honest = json.loads((out / "honest" / "report.json").read_text())
        assert honest["problem"] == "" and honest["score"] == honest["max_score"], names_now  # nor the worker's


def test_the_prairielearn_entry_point_from_the_students_folder_imports_and_lends_nothing(tmp_path):
    """h56 and h57 together as a PrairieLearn job's /grade/student, the entry point started there."""
    job = tmp_path / "job"
    made = materialize(tmp_path / "subs", ["h56_shadow_reference", "h57_checkout_specs"])
    shutil.copytree(made["h56_shadow_reference"], job / "student")
    shutil.copytree(made["h57_checkout_specs"], job / "student", dirs_exist_ok=True)
    (job / "tests").mkdir()
    shutil.copy(REPO / "specs" / "02_eager.yaml", job / "tests")
    done = _graphgrade("prairielearn", "--root", str(job), cwd=job / "student")
    assert done.returncode == 0, done.stderr[-3000:]
    assert _markers(tmp_path) == [] and "SHADOW-IMPORTED" not in done.stdout + done.stderr
    results = json.loads((job / "results" / "results.json").read_text())
    assert results["gradable"] is True and len(results["tests"]) == 10  # the job's tests/, not the student's specs/
