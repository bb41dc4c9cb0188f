"""Which spec folder a command reads, and the one line that says so.

Without ``--specs``, a command run inside graphgrade's own checkout reads that checkout's
``specs/``, so an instructor's new case counts at once, with no reinstall. A checkout is the
folder the running ``grader`` package came from (an editable install's source tree), when it
holds ``specs/`` beside a ``pyproject.toml`` naming graphgrade, and the current folder is it or
lies under it; never a folder that merely looks like one (a submission can hold ``specs/`` and
such a ``pyproject.toml``), and never one that is, or lies under, a folder being graded. Elsewhere it reads ``$GRAPHGRADE_SPECS`` when set (the private image of
deploy/Dockerfile bakes the specs there), else the suite installed with graphgrade; in a
student kit, always the kit's public specs. ``--specs`` always wins. Every command that reads specs prints
:func:`specs_line` on standard error: the folder, where it came from, and its counts.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

GIVEN = "given with --specs"
CHECKOUT = "this checkout's specs/"
BUNDLED = "the suite installed with graphgrade"
KIT = "the public specs bundled in this student kit"
LAB = "the specs of the lab given with --lab or $GRAPHGRADE_LAB"
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


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def find_checkout(start: Path | None = None, graded: Sequence[Path] = ()) -> Path | None:
    """graphgrade's own source tree (:func:`grader.trusted_path.own_source_root`) when it is a
    checkout and ``start`` (default: the current folder) is it or lies under it, and it is not,
    and does not lie under, any of ``graded``; else None."""
    from grader.trusted_path import own_source_root

    try:
        here = (start or Path.cwd()).resolve()
        graded_dirs = [Path(g).resolve() for g in graded]
    except OSError:  # the current folder was removed
        return None
    own = own_source_root()
    if not is_checkout(own) or not _within(here, own) or any(_within(own, g) for g in graded_dirs):
        return None
    return own


def default_specs(graded: Sequence[Path] = ()) -> SpecSource:
    """The specs a command reads without ``--specs`` (see the module's docstring); ``graded``:
    the folders the command grades (none of them, nor a folder above one, is a checkout)."""
    from grader.commands.kit_marker import kit_info

    if kit_info() is not None:
        return SpecSource(bundled_specs_dir(), KIT)
    checkout = find_checkout(graded=graded)
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


def choose(given: Path | None, graded: Sequence[Path] = (), lab_given: bool = False) -> SpecSource:
    """``--specs`` when given; else the specs of a lab named with ``--lab`` (or
    ``$GRAPHGRADE_LAB``); else the default lab's, found as the module's docstring says."""
    if given is not None:
        return SpecSource(given, GIVEN)
    if lab_given:
        from grader.lab import active

        return SpecSource(active().paths.specs, LAB)
    return default_specs(graded)


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
