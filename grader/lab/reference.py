"""A lab's reference solution, run in the grader's own process (``graphgrade validate``).

A lab whose ``lab.yaml`` names ``backends`` (``pack.MODULE:load_backend``) runs its reference on
the backend asked for, through the pack (the module also defines ``BackendUnavailable``). Any
other lab has one backend, ``python``: its ``reference`` file, executed anew under a private
module name, with no adapters.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from grader.lab.interface import Lab
from grader.lab.loading import pack_attribute

PLAIN_BACKEND = "python"


class ReferenceUnavailable(Exception):
    """The reference cannot run on the backend asked for (one line: why)."""


def _identity(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class PlainReference:
    """A lab's one reference module, with the identity as both adapters."""

    module: ModuleType
    name: str = PLAIN_BACKEND
    prepare_input = staticmethod(_identity)
    to_host = staticmethod(_identity)

    def __getattr__(self, name: str) -> Any:  # the contract's names, and its file, as a backend has them
        if name.startswith("__") and name not in ("__file__", "__name__"):
            raise AttributeError(name)
        return getattr(self.module, name)


def default_backend(lab: Lab) -> str:
    return "numpy" if lab.backends is not None else PLAIN_BACKEND


def fresh_module(path, name: str) -> ModuleType:
    """The file at ``path`` executed anew as a module named ``name`` (registered in
    ``sys.modules``, as dataclasses need), so that nothing a case does to it reaches another copy."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_reference(lab: Lab, backend: str | None = None) -> Any:
    """The lab's reference on ``backend`` (default: numpy for a lab with backends, else python)."""
    backend = backend or default_backend(lab)
    if lab.backends is None:
        if backend != PLAIN_BACKEND:
            raise ReferenceUnavailable(f"the lab {lab.id!r} has one reference ({PLAIN_BACKEND}), no {backend} backend")
        return PlainReference(fresh_module(lab.paths.reference, f"_graphgrade_reference_{lab.module}"))
    module_ref = lab.backends.split(":")[0]
    unavailable = pack_attribute(lab, f"{module_ref}:BackendUnavailable")
    try:
        return pack_attribute(lab, lab.backends)(backend)
    except unavailable as exc:
        raise ReferenceUnavailable(str(exc)) from None
