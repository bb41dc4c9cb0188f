"""pyproject.toml installs every package of the source tree (a package left out breaks `pip install .`)."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_directory_is_installed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(config["packages"])
    mapped = {name: ROOT / folder for name, folder in config.get("package-dir", {}).items()}
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("grader", "reports", "reference", "specs", "student_template")
        for init in (ROOT / top).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"
    assert all((path / "__init__.py").exists() or any(path.glob("*.md")) for path in mapped.values())
