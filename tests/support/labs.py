"""Student folders built in a test: the reference solution with one edit, and a few spec files."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REFERENCE = (REPO / "reference" / "cudagraph.py").read_text(encoding="utf-8")

# GraphRunner._replay's first lines, and its whole body up to the launch
REPLAY_LOAD = "        self._load(entry.static_input, x)\n        y = entry.static_input"
REPLAY_BODY = REPLAY_LOAD + "\n        for op in self.ops:\n            y = op(y)\n        LaunchCounter.bump(1)"
TYPO_LINE = "        self._load(entry.static_inputs, x)"  # a typo in a method
EAGER_LINE = "        y = run_eager(self.ops, x)"  # a replay that runs the ops eagerly on the caller's array


def reference_with(old: str, new: str) -> str:
    """The reference solution with one edit (``old`` must be in it)."""
    assert old in REFERENCE
    return REFERENCE.replace(old, new)


def typo_submission() -> str:
    return reference_with(REPLAY_LOAD, TYPO_LINE + "\n        y = entry.static_input")


def eager_submission() -> str:
    return reference_with(REPLAY_BODY, EAGER_LINE)


def line_of(source: str, text: str) -> int:
    """The 1-based number of the line that is exactly ``text``."""
    return source.splitlines().index(text) + 1


def lab(tmp_path: Path, source: str, specs: tuple[str, ...] = ()) -> Path:
    """``tmp_path/lab/cudagraph.py`` holding ``source``; the named spec files in ``tmp_path/specs``."""
    folder = tmp_path / "lab"
    folder.mkdir(parents=True)
    (folder / "cudagraph.py").write_text(source, encoding="utf-8")
    if specs:
        (tmp_path / "specs").mkdir()
        for name in specs:
            shutil.copy(REPO / "specs" / name, tmp_path / "specs")
    return folder
