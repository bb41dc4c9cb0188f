"""The default lab's op vocabulary as the tests use it: the CUDA-graph lab's ``pack/ops.py``, loaded
by path under the pack's private name, exactly as the engine loads it (grader.lab.vocabulary)."""

from __future__ import annotations

from grader.lab import load_lab, op_vocabulary
from grader.lab.loading import default_lab_root

VOCABULARY = op_vocabulary(load_lab(default_lab_root()))
ops = VOCABULARY.module
