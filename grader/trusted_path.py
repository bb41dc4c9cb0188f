"""The trusted side never imports a student's file: no interpreter graphgrade starts has the
current folder on its import path.

Python puts a folder first on ``sys.path`` when it starts: the current folder for ``python -c``
(how multiprocessing's ``spawn`` and ``forkserver`` start a child) and ``python -m``, the
script's folder for a script. Graded from inside a class folder, a student's folder named
``multiprocessing`` (or ``pickle``, ``grader``, ...) would then be imported, as root, by the
similarity process. So the grader's entry points call :func:`harden` first: it sets
``PYTHONSAFEPATH=1`` in the environment every child inherits (Python 3.11+ then adds no such
folder, whatever the start method or the command line), and takes the current folder off the
grader's own ``sys.path``, which multiprocessing hands to a ``spawn`` child as it is.
Processes graphgrade starts itself also get a working folder of their own (:data:`SAFE_CWD`):
the worker zygote, and the bundle's and the image's scripts (``cd /`` and ``python3 -I``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SAFE_PATH_ENV = "PYTHONSAFEPATH"
SAFE_CWD = "/"  # root's own folder: what a child started there may find on its path is the system's


def own_source_root() -> Path:
    """The folder the running ``grader`` package came from (a checkout's root, for an editable
    install; site-packages otherwise)."""
    import grader

    return Path(grader.__file__).resolve().parents[1]


def _is_cwd(entry: str, cwd: Path | None) -> bool:
    if entry in ("", "."):
        return True
    if cwd is None:
        return False
    try:
        return Path(entry).resolve() == cwd
    except (OSError, RuntimeError, ValueError):
        return False


def drop_cwd_from_path() -> None:
    """Take the current folder off ``sys.path`` (``''``, ``.`` or its full name), unless it is
    the folder graphgrade itself came from (``python -m grader`` inside a checkout)."""
    try:
        cwd: Path | None = Path.cwd().resolve()
    except OSError:  # the current folder was removed
        cwd = None
    own = own_source_root()
    sys.path[:] = [p for p in sys.path if not _is_cwd(p, cwd) or (cwd == own and p not in ("", "."))]


def harden() -> None:
    """Called first by every entry point of the grader (see the module's docstring)."""
    os.environ[SAFE_PATH_ENV] = "1"
    drop_cwd_from_path()


def child_environment(env: dict[str, str]) -> dict[str, str]:
    """``env`` for an interpreter graphgrade starts itself, with the current folder off its path."""
    return {**env, SAFE_PATH_ENV: "1"}


class StartedInSafeFolder:
    """``with StartedInSafeFolder():`` around starting a multiprocessing child on Python 3.10,
    which has no ``PYTHONSAFEPATH``: the child starts in :data:`SAFE_CWD` (its ``python -c``
    puts that folder first), then returns to ours. Only while this process runs no other thread
    (the working folder is the whole process's); on 3.11+ it does nothing."""

    def __init__(self) -> None:
        self._back: int | None = None

    def __enter__(self) -> StartedInSafeFolder:
        import threading

        if sys.version_info < (3, 11) and threading.active_count() == 1:
            self._back = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
            os.chdir(SAFE_CWD)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._back is not None:
            try:
                os.fchdir(self._back)
            finally:
                os.close(self._back)
