"""Turn the hostile modules into gradable submissions.

A submission only sees its own directory, so each ``hNN_*.py`` becomes
``DEST/hNN_*/cudagraph.py`` with ``_honest_core.py`` and ``_hostile_kit.py``
copied beside it. Two baselines come with them: ``honest`` (the core as it is)
and ``buggy`` (the core with ``BUGGY = True``, what the cheaters start from).

By hand::

    python tests/hostile/materialize.py /tmp/hostile
    sudo graphgrade grade /tmp/hostile/* --out /tmp/hostile-out --timeout 2 --budget 20
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
HELPERS = ("_honest_core.py", "_hostile_kit.py")
BASELINES = {
    "honest": "from _honest_core import *  # noqa: F401,F403\n",
    "buggy": "import _honest_core\n\n_honest_core.BUGGY = True\nfrom _honest_core import *  # noqa: F401,F403,E402\n",
}


MANY_DIRS = 100_000
DEEP_DIRS = 1_500
# Folders too deep for shutil.rmtree (and so for pytest's clean-up of old temporary folders):
# tests/conftest.py removes them at the end of the session.
DEEP_TREES: list[Path] = []


def _many_dirs(folder: Path) -> None:
    """h46: 100,000 empty directories beside cudagraph.py."""
    base = folder / "many"
    base.mkdir(exist_ok=True)
    for i in range(MANY_DIRS):
        os.mkdir(base / f"d{i}")


def _deep_dirs(folder: Path) -> None:
    """h47: 1,500 directories, each inside the last (made through descriptors, not paths)."""
    DEEP_TREES.append(folder / "d")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(DEEP_DIRS):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


FORGED_IN_ZIP = (
    "import sys\nsys.modules['_honest_core'].BUGGY = False  # the forgery: the core becomes the correct build\n"
)


def _zip_forgery(folder: Path) -> None:
    """h54: ``helpers.zip`` beside cudagraph.py, holding ``_forged.py`` (Python the scan cannot read)."""
    import zipfile

    with zipfile.ZipFile(folder / "helpers.zip", "w") as archive:
        archive.writestr("_forged.py", FORGED_IN_ZIP)


HOSTILE_ANSWERS = (
    "constraint-1: <b>12</b>\n"
    "constraint-2: cudagraph.py:1\n"
    'win: =HYPERLINK("http://x.invalid","9")\n'
    "two-graphs: </dd><script>alert(1)</script><img src=x onerror=alert(2)> \x1b[2J\x1b[31mred\x00"
    "\u202egnp.exe\rmallory,win,cudagraph.py:1,passed,forged\n"
)


def _answers_markup(folder: Path) -> None:
    """h80: an answers.md whose free text and citations carry markup, escapes and a forged CSV row."""
    (folder / "answers.md").write_text(HOSTILE_ANSWERS, encoding="utf-8", newline="")
# h63: the forgery h53 does in the open (a patch of the op's class that rewrites its call record),
# kept in notes.txt as base64 of zlib-compressed text and run through getattr(builtins, "ex" + "ec").
ENCODED_FORGERY = """
STATIC = {}
PATCHED = []


def patch(op):
    cls = type(op)
    if PATCHED or cls.__name__ != "GraderOp":
        return
    real_call = cls.__call__

    def forged_call(self, x):
        out = real_call(self, x)
        captured = STATIC.pop(id(x), None)
        log = getattr(self, "_witness", None)
        if captured is not None and log is not None:
            record = list(log.calls[-1])
            record[2] = captured
            log.calls[-1] = tuple(record)
        return out

    setattr(cls, "__call__", forged_call)
    PATCHED.append(cls)
"""


def _encoded_forgery(folder: Path) -> None:
    """h63: ``notes.txt`` holding ENCODED_FORGERY as base64 of zlib-compressed text."""
    import base64
    import zlib

    (folder / "notes.txt").write_bytes(base64.b64encode(zlib.compress(ENCODED_FORGERY.encode())) + b"\n")


SHADOW_MARKERS = "shadow-markers"  # beside the submissions' folder: where a shadow that ran says so
# A module that must never be imported by the grader: if it is, it leaves a file naming itself,
# the process and its command line in the markers folder, and says so on standard error.
SHADOW_SOURCE = """import os as _os, sys as _sys
_where = {markers!r}
try:
    _os.makedirs(_where, exist_ok=True)
    with open(_os.path.join(_where, "%s-%d" % (__name__, _os.getpid())), "w") as _f:
        _f.write(" ".join(_sys.argv))
except OSError:
    pass
print("SHADOW-IMPORTED %s by %d" % (__name__, _os.getpid()), file=_sys.stderr, flush=True)
"""


def markers_of(folder: Path) -> Path:
    """The markers folder of the shadows planted in ``folder`` (a submission, or a working folder
    beside the submissions)."""
    return folder.resolve().parent.parent / SHADOW_MARKERS


def plant_shadow(folder: Path, name: str, markers: Path, package: bool = False) -> None:
    """``name.py`` (or ``name/__init__.py``) in ``folder``, which reports to ``markers`` if it is
    ever imported."""
    path = folder / name / "__init__.py" if package else folder / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SHADOW_SOURCE.format(markers=str(markers)))


def _shadow_multiprocessing(folder: Path) -> None:
    """h55: a package ``multiprocessing`` beside cudagraph.py."""
    plant_shadow(folder, "multiprocessing", markers_of(folder), package=True)


def _shadow_reference(folder: Path) -> None:
    """h56: ``reference.py``, ``specs.py`` and a package ``grader`` beside cudagraph.py."""
    for name in ("reference", "specs"):
        plant_shadow(folder, name, markers_of(folder))
    plant_shadow(folder, "grader", markers_of(folder), package=True)


EASY_SPEC = """format: 1
specs:
  - id: easy
    title: An easy case (the student's own)
    tag: launch-counter
    points: 100
    visibility: visible
    explanation: The student's own spec.
    hint: Nothing to do.
    cases:
      - id: reset-sets-zero
        description: reset() brings the count to 0.
        steps:
          - method: reset
            of: LaunchCounter
          - read: n
            of: LaunchCounter
            as: n
        checks:
          - value: {step: n, equals: 0}
"""


def _checkout_specs(folder: Path) -> None:
    """h57: ``specs/`` (one easy case) beside a ``pyproject.toml`` naming graphgrade."""
    (folder / "specs").mkdir(exist_ok=True)
    (folder / "specs" / "easy.yaml").write_text(EASY_SPEC)
    (folder / "pyproject.toml").write_text('[project]\nname = "graphgrade"\nversion = "0"\n')


# Submissions whose attack is the folder itself, not only the module.
LAYOUTS = {
    "h46_many_dirs": _many_dirs,
    "h47_deep_dirs": _deep_dirs,
    "h54_zip_forgery": _zip_forgery,
    "h80_answers_markup": _answers_markup,
    "h63_encoded_exec": _encoded_forgery,
    "h55_shadow_multiprocessing": _shadow_multiprocessing,
    "h56_shadow_reference": _shadow_reference,
    "h57_checkout_specs": _checkout_specs,
}


def hostile_names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("h[0-9][0-9]_*.py"))


def materialize(dest: Path, names: list[str] | None = None) -> dict[str, Path]:
    """Write the baselines and the hostile submissions ``names`` (default: all) under ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    made: dict[str, Path] = {}
    for name, source in BASELINES.items():
        made[name] = _submission(dest / name, source)
    for name in names if names is not None else hostile_names():
        made[name] = _submission(dest / name, (HERE / f"{name}.py").read_text())
        if name in LAYOUTS:
            LAYOUTS[name](made[name])
    return made


# Every submission answers the handout's questions as the honest core's author would: its lines
# (tests/support/answer_lines.py lists what the trace accepts), so the notebook answers pass for
# the honest baseline and change nothing else's expectation.
HONEST_ANSWERS = "constraint-1: _honest_core.py:71\nconstraint-2: _honest_core.py:84\nwin: _honest_core.py:88\ntwo-graphs: two capturable runs.\n"


def _submission(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cudagraph.py").write_text(source)
    (folder / "answers.md").write_text(HONEST_ANSWERS)
    for helper in HELPERS:
        shutil.copyfile(HERE / helper, folder / helper)
    return folder


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/hostile/materialize.py DEST")
    for name, path in materialize(Path(sys.argv[1])).items():
        print(path)
