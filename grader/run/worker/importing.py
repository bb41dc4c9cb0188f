"""What a worker's import system takes from a submission: ``.py`` source, nothing else.

Python's default path hooks import zip archives (``zipimport``), compiled modules (``.pyc``,
also from a ``__pycache__`` beside a source whose size and time match) and extension modules
(``.so``), from any folder on ``sys.path``. The integrity scan reads ``.py`` source only, so
code shipped in any of those forms would run unseen. In a worker:

* a path entry beneath a *trusted* root (the standard library, numpy, the grader's own
  package, the audit's trusted ``import_paths``) keeps Python's own finders;
* any other folder (the submission, its working directory, any folder its code adds to
  ``sys.path``) gets a finder for ``.py`` source only, compiled from the source every time
  (a bytecode cache is neither read nor written);
* any other entry (a zip archive, whatever its name) is no import location at all.

The scan flags a submission that ships such files (``compiled-code``) and code that changes
the import machinery (``sys.path_hooks``, ``sys.meta_path``, ``zipimport``: ``dynamic-code``).
"""

from __future__ import annotations

import importlib.machinery
import os
import sys

SOURCE_SUFFIXES = [".py"]


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Loads a module from its source text alone: no file's size and time are given to the
    import system, which then never looks for, trusts or writes a bytecode cache."""

    def path_stats(self, path):  # type: ignore[override]
        raise OSError("graphgrade: compiled from source only")


def _beneath(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def source_only_hooks(trusted: tuple[str, ...]) -> None:
    """Make this process's import system take only ``.py`` source outside ``trusted`` (see the
    module's docstring). Cached finders of other entries are dropped, so an entry a submission
    adds later is looked at by the new hook too."""
    roots = tuple(dict.fromkeys(os.path.realpath(r) for r in trusted if r))
    python_hooks = list(sys.path_hooks)
    source_finder = importlib.machinery.FileFinder.path_hook((SourceOnlyLoader, SOURCE_SUFFIXES))

    def hook(entry: str):
        where = os.path.realpath(entry or os.curdir)
        if _beneath(where, roots):
            for python_hook in python_hooks:
                try:
                    return python_hook(entry)
                except ImportError:
                    continue
            raise ImportError(f"no finder for {entry!r}")
        if os.path.isdir(where):
            return source_finder(entry)
        raise ImportError(f"{entry!r} is not a folder: a worker imports .py files from folders only")

    sys.path_hooks[:] = [hook]
    for entry in list(sys.path_importer_cache):
        if not _beneath(os.path.realpath(entry or os.curdir), roots):
            del sys.path_importer_cache[entry]
