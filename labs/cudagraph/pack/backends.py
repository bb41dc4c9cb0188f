"""The CUDA-graph lab's reference backends (numpy, and CuPy on a GPU), for ``graphgrade validate``.

The engine asks a lab for ``load_backend(name)`` (``lab.yaml: backends``): an object holding the
reference module (``module``), its ``name`` and the adapters ``prepare_input`` and ``to_host``;
``BackendUnavailable`` says why a backend cannot run here.
"""

from reference.backend import BackendUnavailable, load_backend

__all__ = ["BackendUnavailable", "load_backend"]
