"""Which spec folder a command reads, and the one line that says so.

Without ``--specs``, a command run inside a graphgrade checkout (a folder holding ``specs/``
beside a ``pyproject.toml`` that names graphgrade: the current folder or the nearest such
folder above it) reads that checkout's ``specs/``, so an instructor's new case counts at once,
with no reinstall. Elsewhere it reads ``$GRAPHGRADE_SPECS`` when set (the private image of
deploy/Dockerfile bakes the specs there), else the suite installed with graphgrade; in a
student kit, always the kit's public specs. ``--specs`` always wins. Every command that reads specs prints
:func:`specs_line` on standard error: the folder, where it came from, and its counts.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

GIVEN = "given with --specs"
CHECKOUT = "this checkout's specs/"
BUNDLED = "the suite installed with graphgrade"
KIT = "the public specs bundled in this student kit"
SPECS_ENV = "GRAPHGRADE_SPECS"
ENVIRONMENT = f"${SPECS_ENV}"
SPECS_HELP = "spec directory (default: this checkout's specs/ when run inside one, else the installed suite)"
_NAMES_GRAPHGRADE = re.compile(r"""^\s*name\s*=\s*["']graphgrade["']\s*(#.*)?$""", re.MULTILINE)


@dataclass(frozen=True)
class SpecSource:
    path: Path
    how: str  # one of GIVEN, CHECKOUT, BUNDLED, KIT


def bundled_specs_dir() -> Path:
    """The ``specs`` package installed with graphgrade (found without importing it)."""
    spec = importlib.util.find_spec("specs")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the specs package is not installed")
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def is_checkout(folder: Path) -> bool:
    """``folder`` holds ``specs/`` beside a ``pyproject.toml`` whose project is graphgrade."""
    try:
        text = (folder / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return (folder / "specs").is_dir() and _NAMES_GRAPHGRADE.search(text) is not None


def find_checkout(start: Path | None = None) -> Path | None:
    """The checkout holding ``start`` (default: the current folder), nearest first, or None."""
    try:
        here = (start or Path.cwd()).resolve()
    except OSError:  # the current folder was removed
        return None
    return next((folder for folder in (here, *here.parents) if is_checkout(folder)), None)


def default_specs() -> SpecSource:
    """The specs a command reads without ``--specs`` (see the module's docstring)."""
    from grader.commands.kit_marker import kit_info

    if kit_info() is not None:
        return SpecSource(bundled_specs_dir(), KIT)
    checkout = find_checkout()
    if checkout is not None:
        return SpecSource(checkout / "specs", CHECKOUT)
    if os.environ.get(SPECS_ENV):
        return SpecSource(Path(os.environ[SPECS_ENV]), ENVIRONMENT)
    bundled = bundled_specs_dir()
    if not any(bundled.glob("*.y*ml")):  # deploy/strip-install took them out: a grading image
        from grader.errors import UsageError

        raise UsageError(
            "this install holds no specs (a grading image keeps them outside it): give --specs DIR, "
            f"or set ${SPECS_ENV}"
        )
    return SpecSource(bundled, BUNDLED)


def choose(given: Path | None) -> SpecSource:
    return SpecSource(given, GIVEN) if given is not None else default_specs()


def specs_line(source: SpecSource, loaded) -> str:
    """``specs: DIR (how): F files, S specs, C cases, P points``: one line, for standard error."""
    suite = loaded.suite
    counts = ", ".join(
        f"{n} {word}{'' if n == 1 else 's'}"
        for n, word in ((len(suite.files), "file"), (len(suite.specs), "spec"), (len(suite.cases), "case"))
    )
    return f"graphgrade: specs: {source.path} ({source.how}): {counts}, {sum(s.points for s in suite.specs):g} points"


def say_specs(path: Path, how: str, loaded) -> None:
    """Print :func:`specs_line` for the suite ``loaded`` from ``path`` on standard error."""
    print(specs_line(SpecSource(Path(path), how), loaded), file=sys.stderr)
