"""Archives graphgrade builds from itself: the Gradescope autograder zip here, the student kit
in :mod:`grader.commands.kit`.

Both are made from the *installed* packages, found through the import system, plus a
``pyproject.toml`` written here. So they work the same from an editable checkout, a plain
``pip install .`` and a wheel: nothing depends on the source tree being present (the old
builder looked for ``pyproject.toml`` beside the packages and failed after ``pip install .``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import stat
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path

import grader
from grader.commands.cli_common import Subcommand
from grader.errors import UsageError

DIST_NAME = "graphgrade"
ALL_PACKAGES = ("grader", "reference", "reports", "specs", "student_template")
CONTRACT_NAME = "contract.md"
DOCS_PACKAGE = "grader.docs"  # docs/ of the source tree, installed as package data (see pyproject.toml)
_SKIP_DIRS = {"__pycache__", ".git", "tests", "build", "dist", ".pytest_cache", ".hypothesis", ".venv", ".mypy_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")
SPEC_SUFFIXES = (".yaml", ".yml")
_EPOCH = (1980, 1, 1, 0, 0, 0)
# What setuptools installs besides *.py, per package (the source tree's pyproject.toml says the same).
PACKAGE_DATA = {
    "specs": ["*.yaml", "*.json", "*.md"],
    "reports": ["templates/*.j2"],
    "student_template": ["*.md"],
    DOCS_PACKAGE: ["*.md"],
}

Entries = dict[str, tuple[bytes, int]]  # {arcname: (bytes, mode)}


class BundleError(ValueError):
    """A bundle cannot be built from this install or these inputs (one line, for the CLI)."""


# ------------------------------------------------------------------ the installed sources
def installed_package_dirs(names: tuple[str, ...] = ALL_PACKAGES) -> dict[str, Path]:
    """Where each top-level package's files are, without importing it (the reference included)."""
    dirs: dict[str, Path] = {}
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise BundleError(f"the package {name!r} is not installed here; install the full graphgrade package")
        dirs[name] = Path(list(spec.submodule_search_locations)[0]).resolve()
    return dirs


def contract_path() -> Path:
    """The student contract document: package data of ``grader.docs`` in an install, or
    ``docs/contract.md`` beside the packages in a source checkout (editable install)."""
    candidates = []
    try:
        spec = importlib.util.find_spec(DOCS_PACKAGE)
    except ImportError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        candidates += [Path(p) / CONTRACT_NAME for p in spec.submodule_search_locations]
    candidates.append(Path(grader.__file__).resolve().parents[1] / "docs" / CONTRACT_NAME)
    for path in candidates:
        if path.is_file():
            return path
    raise BundleError(f"the contract document ({CONTRACT_NAME}) is missing from this install")


def default_lab_files(prefix: str) -> tuple[Entries, list[str], dict[str, list[str]]]:
    """The default lab an install grades (``labs/DEFAULT`` and that lab's folder: its lab.yaml
    and pack; never another lab's files, which may hold hidden specs or a reference), as
    ``{prefix + arcname: ...}``, its packages and their package data."""
    from grader.lab.loading import DEFAULT_FILE, LABS, default_lab_root

    lab = default_lab_root()
    entries: Entries = {}
    for path in [LABS / "__init__.py", LABS / DEFAULT_FILE, *walk(lab)]:
        entries[f"{prefix}labs/{path.relative_to(LABS).as_posix()}"] = (path.read_bytes(), 0o644)
    packages = ["labs", *subpackages(f"labs.{lab.name}", lab)]
    return entries, packages, {"labs": [DEFAULT_FILE], f"labs.{lab.name}": ["lab.yaml"]}


def walk(root: Path):
    """Files under ``root`` in a stable order, skipping caches, VCS data, tests and links."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".") and not d.endswith(".egg-info")
        )
        for name in sorted(filenames):
            if name.endswith(_SKIP_SUFFIXES) or name.startswith("."):
                continue
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                yield path


def subpackages(name: str, root: Path) -> list[str]:
    """``name`` and every folder beneath ``root`` holding an ``__init__.py``, as dotted names."""
    found = [name]
    for path in walk(root):
        if path.name == "__init__.py" and path.parent != root:
            found.append(".".join((name, *path.parent.relative_to(root).parts)))
    return sorted(found)


def runtime_requirements() -> tuple[list[str], str]:
    """The installed distribution's runtime dependencies (no extras) and its Python bound."""
    try:
        meta = importlib.metadata.metadata(DIST_NAME)
        requires = importlib.metadata.requires(DIST_NAME) or []
    except importlib.metadata.PackageNotFoundError:
        raise BundleError(f"the {DIST_NAME} distribution is not installed here (pip install it first)") from None
    deps = [r for r in requires if "extra ==" not in r.replace("extra==", "extra ==")]
    return deps, meta.get("Requires-Python") or ">=3.10"


def extra_requirement(name: str, extra: str = "test") -> str:
    """The installed distribution's requirement on ``name`` in ``extra``, without its marker
    (the student kit runs its cases under pytest, which the full package needs for tests only)."""
    requires = importlib.metadata.requires(DIST_NAME) or []
    for requirement in requires:
        spec, _, marker = requirement.partition(";")
        if marker.replace(" ", "") == f'extra=="{extra}"' and re.match(rf"{re.escape(name)}(?![\w.-])", spec.strip()):
            return spec.strip()
    raise BundleError(f"the {DIST_NAME} distribution names no {name} in its {extra!r} extra")


def pyproject_toml(
    packages: list[str],
    package_data: Mapping[str, list[str]],
    *,
    description: str,
    package_dir: Mapping[str, str] | None = None,
    also_requires: tuple[str, ...] = (),
) -> str:
    """A setuptools ``pyproject.toml`` for the given packages (JSON strings are valid TOML
    strings); ``also_requires``: dependencies beyond the installed distribution's own."""
    deps, python = runtime_requirements()
    deps = [*deps, *also_requires]
    q = json.dumps
    lines = [
        "[build-system]",
        'requires = ["setuptools>=64"]',
        'build-backend = "setuptools.build_meta"',
        "",
        "[project]",
        f"name = {q(DIST_NAME)}",
        f"version = {q(grader.__version__)}",
        f"description = {q(description)}",
        'readme = "README.md"',
        f"requires-python = {q(python)}",
        f"dependencies = [{', '.join(q(d) for d in deps)}]",
        "",
        "[project.scripts]",
        'graphgrade = "grader.commands.cli:main"',
        "",
        "[project.entry-points.pytest11]",  # `pytest` in a student's folder (grader.commands.pytest_plugin)
        'graphgrade = "grader.commands.pytest_plugin"',
        "",
        "[tool.setuptools]",
        f"packages = [{', '.join(q(p) for p in packages)}]",
        "",
    ]
    if package_dir:
        lines += ["[tool.setuptools.package-dir]", *(f"{q(k)} = {q(v)}" for k, v in package_dir.items()), ""]
    lines += [
        "[tool.setuptools.package-data]",
        *(f"{q(k)} = [{', '.join(q(g) for g in v)}]" for k, v in package_data.items() if k in packages),
        "",
    ]
    return "\n".join(lines)


def write_zip(zip_path, entries: Entries, first: tuple[str, ...] = ()) -> Path:
    """Write ``entries`` to ``zip_path`` atomically and reproducibly (fixed dates, sorted names,
    Unix modes); names in ``first`` come first."""
    zip_path = Path(zip_path)
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".graphgrade-", suffix=".zip", dir=zip_path.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w") as zf:
            for arcname in sorted(entries, key=lambda a: (a not in first, first.index(a) if a in first else 0, a)):
                data, mode = entries[arcname]
                info = zipfile.ZipInfo(arcname, date_time=_EPOCH)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = (stat.S_IFREG | mode) << 16
                info.create_system = 3  # unix, so the mode bits are honoured
                zf.writestr(info, data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, zip_path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return zip_path


# ------------------------------------------------------------------ the Gradescope autograder
SETUP_SH = """\
#!/usr/bin/env bash
# graphgrade autograder setup (written by `graphgrade gradescope-bundle`).
# Gradescope runs this once, as root, when it builds the autograder image.
# Choose an Ubuntu 22.04 (or newer) base image: graphgrade needs Python 3.10+.
#
#   setup.sh [--root DIR]     (default /autograder; another DIR runs the same steps in a test)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
ROOT=/autograder
if [ "${1:-}" = "--root" ] && [ -n "${2:-}" ]; then ROOT=$(cd "$2" && pwd -P) || exit 1; fi
cd /  # a folder of root's: nothing started here imports from the folder this was started in

if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
  apt-get update
  apt-get install -y --no-install-recommends python3 python3-pip python3-venv
fi

if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "graphgrade needs Python 3.10 or newer; this image has $(python3 --version 2>&1)." >&2
  echo "Pick an Ubuntu 22.04 (or newer) base image in the autograder settings." >&2
  exit 1
fi

# The kit is installed from the zip's own source (kit/), which holds no spec cases, then that
# source (a readable copy of the reference solution) is removed: only the root-only installed
# copy stays (see run_autograder).
python3 -I -m pip install --no-cache-dir "$ROOT/source/kit" \\
  || python3 -I -m pip install --no-cache-dir --break-system-packages "$ROOT/source/kit"
rm -rf "$ROOT/source/kit"
command -v graphgrade >/dev/null
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# graphgrade autograder entry point (written by `graphgrade gradescope-bundle`).
# Gradescope runs this as root for every submission, from /autograder.
#
#   run_autograder [--root DIR]     (default /autograder; another DIR runs the same steps in a test)
#
# It grades from / and starts Python with -I: started in the submission's folder, nothing it runs
# imports the student's reference.py, specs.py or grader/. The specs are its own ($ROOT/source/specs).
set -u
ROOT=/autograder
if [ "${1:-}" = "--root" ] && [ -n "${2:-}" ]; then ROOT=$(cd "$2" && pwd -P) || exit 1; fi
cd /
SRC=$ROOT/source
# Outside $ROOT/results: staff.html and report.json hold every hidden case in full.
OUT=$ROOT/graphgrade-out

# The specs hold the hidden cases: root only, so the student's code cannot read them; the
# whole source folder too (a kit/ left from setup would hold the reference solution).
chown -R root:root "$SRC" 2>/dev/null || true
chmod -R go-rwx "$SRC"
# The installed reference solution and specs package too (specs/README.md quotes the mutants);
# Landlock hides them already, where the kernel has it.
for pkg in reference specs; do
  DIR=$(python3 -I -c "import os, $pkg; print(os.path.dirname($pkg.__file__))" 2>/dev/null) \\
    && chown -R root:root "$DIR" && chmod -R go-rwx "$DIR"
done

mkdir -p "$ROOT/results"
rm -rf "$OUT"
graphgrade grade "$ROOT/submission" --specs "$SRC/specs" --out "$OUT" --visibility all --no-cache
status=$?

if [ -f "$OUT/submission/results.json" ]; then
  cp "$OUT/submission/results.json" "$ROOT/results/results.json"
  exit 0
fi
echo "graphgrade wrote no $OUT/submission/results.json (exit status $status)." >&2
exit 1
"""

AUTOGRADER_README = b"# graphgrade\n\nAutograder kit for the CUDA-graph capture and replay lab.\n"


def bundle_entries(specs_dir, package_dirs: Mapping[str, Path] | None = None, contract: Path | None = None) -> Entries:
    """What :func:`build_bundle` puts into the zip. ``package_dirs`` (``{name: folder}`` for
    every top-level package) defaults to the installed packages."""
    specs_dir = Path(specs_dir)
    if not specs_dir.is_dir():
        raise BundleError(f"{specs_dir}: no such specs directory")
    spec_files = [p for p in walk(specs_dir) if p.suffix in SPEC_SUFFIXES]
    if not spec_files:
        raise BundleError(f"{specs_dir}: no *.yaml spec files to bundle")
    dirs = dict(package_dirs) if package_dirs is not None else installed_package_dirs()
    contract = contract if contract is not None else contract_path()

    entries: Entries = {
        "setup.sh": (SETUP_SH.encode(), 0o755),
        "run_autograder": (RUN_AUTOGRADER.encode(), 0o755),
    }
    # The specs that will be graded (hidden cases included): /autograder/source/specs.
    for p in walk(specs_dir):
        entries["specs/" + p.relative_to(specs_dir).as_posix()] = (p.read_bytes(), 0o644)
    # The kit's source, installed by setup.sh. Its own spec files stay out: pip
    # would copy them into site-packages, where any user can read them.
    packages: list[str] = [DOCS_PACKAGE]
    for name, base in sorted(dirs.items()):
        packages += subpackages(name, base)
        for p in walk(base):
            if name == "specs" and p.suffix in SPEC_SUFFIXES:
                continue
            entries[f"kit/{name}/" + p.relative_to(base).as_posix()] = (p.read_bytes(), 0o644)
    lab_entries, lab_packages, lab_data = default_lab_files("kit/")
    entries.update(lab_entries)
    packages += lab_packages
    entries[f"kit/docs/{CONTRACT_NAME}"] = (contract.read_bytes(), 0o644)
    entries["kit/README.md"] = (AUTOGRADER_README, 0o644)
    data = {k: [g for g in v if not (k == "specs" and g.endswith(SPEC_SUFFIXES))] for k, v in PACKAGE_DATA.items()}
    data.update(lab_data)
    toml = pyproject_toml(
        sorted(packages), data, description="graphgrade autograder kit", package_dir={DOCS_PACKAGE: "docs"}
    )
    entries["kit/pyproject.toml"] = (toml.encode(), 0o644)
    return entries


def build_bundle(zip_path, specs_dir, package_dirs: Mapping[str, Path] | None = None) -> Path:
    """Write a Gradescope autograder zip and return its path.

    Arguments:
        zip_path: where to write the zip (its folder is created if missing).
        specs_dir: the folder of YAML specs to grade with, hidden cases
            included; it becomes ``/autograder/source/specs``.
        package_dirs: ``{package: folder}`` to bundle instead of the installed
            packages (tests use it).

    The zip holds, at its root (both scripts take ``--root DIR``, default ``/autograder``, and
    run from ``/`` with ``python3 -I``): ``setup.sh`` (installs Python 3 and pip with
    apt when missing, then pip-installs ``kit/``), ``run_autograder`` (locks
    ``specs/`` to root, runs ``graphgrade grade /autograder/submission --specs
    /autograder/source/specs --out /autograder/graphgrade-out
    --visibility all`` and copies ``graphgrade-out/submission/results.json`` to
    ``/autograder/results/results.json``), ``specs/`` and ``kit/``
    (a generated ``pyproject.toml`` and ``README.md``, ``grader/``,
    ``reference/``, ``reports/``, ``specs/`` without its YAML cases,
    ``student_template/``, ``docs/contract.md``; no ``__pycache__``, ``.git``
    or ``tests``). The zip is byte-for-byte reproducible for the same inputs.
    """
    entries = bundle_entries(specs_dir, package_dirs)
    return write_zip(zip_path, entries, first=("setup.sh", "run_autograder"))


# ------------------------------------------------------------------ the command
def run(args) -> int:
    from grader.commands.cli_common import specs_how
    from grader.commands.validate import refuse_unless_valid

    refuse_unless_valid(args.specs, specs_how(args), "gradescope-bundle")  # the checks of validate, first
    try:
        build_bundle(args.output, args.specs)  # from the installed packages: editable, wheel or `pip install .`
    except BundleError as exc:
        raise UsageError(f"gradescope-bundle: {exc}") from None
    except OSError as exc:
        raise UsageError(f"--output {args.output}: cannot write the bundle ({exc.strerror or exc})") from None
    print(f"wrote {args.output}: upload it as the autograder of a Gradescope programming assignment")
    return 0


def add_arguments(z: argparse.ArgumentParser) -> None:
    from grader.commands.spec_source import SPECS_HELP

    z.add_argument("--specs", type=Path, default=None, help=SPECS_HELP)
    z.add_argument(
        "--output",
        type=Path,
        default=Path("graphgrade-autograder.zip"),
        metavar="ZIP",
        help="where to write the zip to upload (default: graphgrade-autograder.zip)",
    )


COMMAND = Subcommand(
    "gradescope-bundle",
    help="build a ready Gradescope autograder zip (the specs are validated first)",
    description="Build the zip to upload as a Gradescope autograder. The specs are checked first as "
    "`graphgrade validate` checks them; a spec that does not load or that the reference fails stops the build.",
    add_arguments=add_arguments,
    run=run,
)
