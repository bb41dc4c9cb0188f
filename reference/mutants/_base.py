"""Helpers for the mutants: a fresh, private copy of the reference to break one piece of.

Every mutant module calls :func:`fresh_reference` to get its own copy of
``reference/cudagraph.py`` (executed anew, registered in ``sys.modules`` under a
unique name so that dataclasses and enums work), replaces one method or
function on that copy, and calls :func:`export` to publish the contract names
at its own module level. A mutant file is therefore a complete submission:
the grader imports it as ``cudagraph`` like any student's file. Patching the
copy never touches ``reference.cudagraph`` itself or any other mutant.
"""

from __future__ import annotations

import itertools
import sys
import types
from pathlib import Path

from reference import CONTRACT_NAMES

REFERENCE_SOURCE = Path(__file__).resolve().parents[1] / "cudagraph.py"
TEMPLATE_SOURCE = Path(__file__).resolve().parents[2] / "student_template" / "cudagraph.py"

_serial = itertools.count()


def fresh_module(source: Path, owner: str) -> types.ModuleType:
    """Execute ``source`` into a new module object named after ``owner`` (the calling module)."""
    name = f"_graphgrade_copy_{next(_serial)}_{owner.replace('.', '_')}"
    module = types.ModuleType(name, None)
    module.__file__ = str(source)
    sys.modules[name] = module  # dataclasses look their module up here while the class is built
    code = compile(source.read_text(encoding="utf-8"), str(source), "exec")
    exec(code, module.__dict__)  # noqa: S102 - our own reference source, not a submission
    return module


def fresh_reference(owner: str) -> types.ModuleType:
    """A private copy of the numpy reference that a mutant may patch freely."""
    return fresh_module(REFERENCE_SOURCE, owner)


def fresh_template(owner: str) -> types.ModuleType:
    """A private copy of the untouched student template."""
    return fresh_module(TEMPLATE_SOURCE, owner)


def capture_into_padded_buffer(ref: types.ModuleType):
    """A ``GraphRunner._capture`` for mutants whose graph key is not the buffer's shape: the static
    buffer is still padded as the reference pads it, so only the keying mistake shows."""
    import numpy as np

    def _capture(self, key, x):
        shape = (self._padded_batch(x.shape[0]), *x.shape[1:]) if x.ndim else ()
        static_input = np.zeros(shape, dtype=x.dtype)
        self._load(static_input, x)
        output = ref.run_eager(self.ops, static_input)
        self.graphs[key] = ref.GraphEntry(shape, static_input, output, len(self.ops))
        return self._real_rows(output, x)

    return _capture


def export(module: types.ModuleType, namespace: dict) -> None:
    """Publish every contract name of ``module`` in ``namespace`` (a mutant's ``globals()``)."""
    for name in CONTRACT_NAMES:
        namespace[name] = getattr(module, name)
