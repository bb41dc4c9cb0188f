"""Gradescope: ``results.json`` for one submission, and a ready-to-upload autograder zip.

``results.json`` follows Gradescope's autograder specification
(https://gradescope-autograders.readthedocs.io/en/latest/specs/): top-level
``score``, ``execution_time``, ``output``, ``visibility``,
``stdout_visibility`` and a ``tests`` list whose entries carry ``name``,
``number``, ``score``, ``max_score``, ``status`` (``passed``/``failed``),
``output``, ``tags`` and ``visibility``.
"""

from __future__ import annotations

import math
import os
import stat
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from grader.results import Report

from ._view import case_text, clean_text, fmt_percent, fmt_points, full_view, one_bit, student_duration, tag_groups

# Gradescope test visibilities. "hidden" tests are shown to staff only; the others reach the
# student (now or later), so a hidden case placed there is shown as one bit.
GRADESCOPE_VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


def _num(x: float) -> float:
    """Points in hundredths (the grader's precision): per-test scores add up to the total."""
    x = float(x)
    return round(x, 2) if math.isfinite(x) else 0.0


def _overview(report: Report) -> str:
    n = len(report.cases)
    ok = sum(1 for c in report.cases if c.status == "passed")
    lines = [
        f"graphgrade: {fmt_points(report.score)} / {fmt_points(report.max_score)} points "
        f"({fmt_percent(report.percent)}); {ok} of {n} cases pass."
    ]
    if report.problem:
        lines += ["", "Your submission could not be graded completely:", clean_text(report.problem)]
        if report.output_tail.strip():
            lines += ["", "Output (last lines):", clean_text(report.output_tail).rstrip()]
    for group in tag_groups(report.specs):
        lines += ["", f"{group.title}: {fmt_points(group.score)} / {fmt_points(group.max_score)}"]
        for t in group.tags:
            lines.append(f"  {t.label}: {fmt_points(t.score)} / {fmt_points(t.max_score)}")
    return "\n".join(lines)


def to_gradescope(report: Report, hidden_visibility: str = "hidden") -> dict[str, Any]:
    """The report as a Gradescope ``results.json`` object (a dict ready for ``json.dump``).

    A visible case is a test with visibility ``visible`` and full feedback. A case of a
    ``hidden`` spec is a test with visibility ``hidden_visibility``: with ``hidden`` (the
    default; Gradescope shows those tests to staff only) it carries every detail, with any other
    visibility a student would see it, so it carries one bit (passed or not, one fixed message).
    Cases of ``after_due_date`` / ``after_published`` specs reach students later: one bit too.
    """
    if not isinstance(report, Report):
        raise TypeError(f"expected a grader.results.Report, got {type(report).__name__}")
    if hidden_visibility not in GRADESCOPE_VISIBILITIES:
        raise ValueError(f"hidden_visibility must be one of {', '.join(GRADESCOPE_VISIBILITIES)}, not {hidden_visibility!r}")
    spec_index = {s.id: i for i, s in enumerate(report.specs, start=1)}
    specs = {s.id: s for s in report.specs}
    per_spec: dict[str, int] = {}
    tests = []
    hidden_no: dict[str, int] = {}
    for case in report.cases:
        staff = full_view(case)
        if case.visibility == "visible" and not case.redacted:
            view = student = staff
            visibility = "visible"
        else:
            hidden_no[case.spec] = hidden_no.get(case.spec, 0) + 1
            student = one_bit(case, hidden_no[case.spec])
            visibility = hidden_visibility if case.visibility in ("hidden", "visible") else case.visibility
            view = staff if visibility == "hidden" else student
        spec = specs.get(view.spec)
        per_spec[view.spec] = per_spec.get(view.spec, 0) + 1
        number = f"{spec_index.get(view.spec, len(spec_index) + 1)}.{per_spec[view.spec]}"
        title = clean_text(spec.title) if spec else clean_text(view.spec)
        label = student.label if view is student else f"{staff.label}, hidden from students" if case.redacted or case.visibility != "visible" else staff.label
        tests.append(
            {
                "name": f"{title} ({clean_text(label)})",
                "number": number,
                "score": _num(view.score),
                "max_score": _num(view.max_score),
                "status": "passed" if view.passed else "failed",
                "output": case_text(view, spec.hint if spec else ""),
                "output_format": "text",
                "tags": [clean_text(view.tag)] if view.tag else [],
                "visibility": visibility,
            }
        )
    return {
        "score": _num(report.score),
        "execution_time": int(round(student_duration(report))) if math.isfinite(report.duration_s) else 0,
        "output": _overview(report),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


# ---------------------------------------------------------------------------
# The autograder zip

KIT_FILES = ("pyproject.toml", "README.md")
KIT_DIRS = ("grader", "reference", "reports", "specs", "student_template")
_SKIP_DIRS = {"__pycache__", ".git", "tests", "build", "dist", ".pytest_cache", ".hypothesis", ".venv", ".mypy_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")
_SPEC_SUFFIXES = (".yaml", ".yml")
_EPOCH = (1980, 1, 1, 0, 0, 0)

SETUP_SH = """\
#!/usr/bin/env bash
# graphgrade autograder setup (written by `graphgrade gradescope-bundle`).
# Gradescope runs this once, as root, when it builds the autograder image.
# Choose an Ubuntu 22.04 (or newer) base image: graphgrade needs Python 3.10+.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
  apt-get update
  apt-get install -y --no-install-recommends python3 python3-pip python3-venv
fi

if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "graphgrade needs Python 3.10 or newer; this image has $(python3 --version 2>&1)." >&2
  echo "Pick an Ubuntu 22.04 (or newer) base image in the autograder settings." >&2
  exit 1
fi

# The kit is installed from the zip's own source (kit/), which holds no spec cases.
python3 -m pip install --no-cache-dir /autograder/source/kit \\
  || python3 -m pip install --no-cache-dir --break-system-packages /autograder/source/kit
command -v graphgrade >/dev/null
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# graphgrade autograder entry point (written by `graphgrade gradescope-bundle`).
# Gradescope runs this as root for every submission, from /autograder.
set -u
SRC=/autograder/source
OUT=/autograder/results/graphgrade

# The specs hold the hidden cases: root only, so the student's code cannot read them.
chown -R root:root "$SRC/specs" 2>/dev/null || true
chmod -R go-rwx "$SRC/specs"
chmod 700 "$SRC/specs"
# The installed reference solution too (Landlock hides both already, where the kernel has it).
REF=$(python3 -c 'import os, reference; print(os.path.dirname(reference.__file__))' 2>/dev/null) \
  && chmod -R go-rwx "$REF" && chmod 700 "$REF"

mkdir -p /autograder/results
rm -rf "$OUT"
graphgrade grade /autograder/submission --specs "$SRC/specs" --out "$OUT" --visibility all
status=$?

if [ -f "$OUT/submission/results.json" ]; then
  cp "$OUT/submission/results.json" /autograder/results/results.json
  exit 0
fi
echo "graphgrade wrote no $OUT/submission/results.json (exit status $status)." >&2
exit 1
"""


def _walk(root: Path):
    """Files under ``root`` in a stable order, skipping caches, VCS data and tests."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".") and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            if name.endswith(_SKIP_SUFFIXES) or name.startswith("."):
                continue
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                yield path


def _add(zf: zipfile.ZipFile, arcname: str, data: bytes, mode: int = 0o644) -> None:
    info = zipfile.ZipInfo(arcname, date_time=_EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.create_system = 3  # unix, so the mode bits are honoured
    zf.writestr(info, data)


def bundle_entries(specs_dir, project_root) -> dict[str, tuple[bytes, int]]:
    """What :func:`build_bundle` puts into the zip: ``{arcname: (bytes, mode)}``."""
    specs_dir = Path(specs_dir)
    project_root = Path(project_root)
    if not (project_root / "pyproject.toml").is_file():
        raise FileNotFoundError(f"{project_root}: no pyproject.toml here; pass the graphgrade project root")
    if not specs_dir.is_dir():
        raise FileNotFoundError(f"{specs_dir}: no such specs directory")
    spec_files = [p for p in _walk(specs_dir) if p.suffix in _SPEC_SUFFIXES]
    if not spec_files:
        raise ValueError(f"{specs_dir}: no *.yaml spec files to bundle")

    entries: dict[str, tuple[bytes, int]] = {
        "setup.sh": (SETUP_SH.encode(), 0o755),
        "run_autograder": (RUN_AUTOGRADER.encode(), 0o755),
    }
    # The specs that will be graded (hidden cases included): /autograder/source/specs.
    for p in _walk(specs_dir):
        entries["specs/" + p.relative_to(specs_dir).as_posix()] = (p.read_bytes(), 0o644)
    # The kit's source, installed by setup.sh. Its own spec files stay out: pip
    # would copy them into site-packages, where any user can read them.
    for name in KIT_FILES:
        p = project_root / name
        if p.is_file():
            entries[f"kit/{name}"] = (p.read_bytes(), 0o644)
    if "kit/README.md" not in entries:
        entries["kit/README.md"] = (b"# graphgrade\n\nAutograder kit for the CUDA-graph capture and replay lab.\n", 0o644)
    for d in KIT_DIRS:
        base = project_root / d
        if not base.is_dir():
            continue
        for p in _walk(base):
            if d == "specs" and p.suffix in _SPEC_SUFFIXES:
                continue
            entries[f"kit/{d}/" + p.relative_to(base).as_posix()] = (p.read_bytes(), 0o644)
    return entries


def build_bundle(zip_path, specs_dir, project_root) -> Path:
    """Write a Gradescope autograder zip and return its path.

    Arguments:
        zip_path: where to write the zip (its folder is created if missing).
        specs_dir: the folder of YAML specs to grade with, hidden cases
            included; it becomes ``/autograder/source/specs``.
        project_root: the graphgrade project folder (holding ``pyproject.toml``);
            its source is bundled under ``kit/`` for ``setup.sh`` to install.

    The zip holds, at its root: ``setup.sh`` (installs Python 3 and pip with
    apt when missing, then pip-installs ``kit/``), ``run_autograder`` (locks
    ``specs/`` to root, runs ``graphgrade grade /autograder/submission --specs
    /autograder/source/specs --out /autograder/results/graphgrade
    --visibility all`` and copies ``graphgrade/submission/results.json`` to
    ``/autograder/results/results.json``), ``specs/`` and ``kit/``
    (``pyproject.toml``, ``README.md``, ``grader/``, ``reference/``,
    ``reports/``, ``specs/`` without its YAML cases, ``student_template/``;
    no ``__pycache__``, ``.git`` or ``tests``). The zip is byte-for-byte
    reproducible for the same inputs.
    """
    entries = bundle_entries(specs_dir, project_root)
    zip_path = Path(zip_path)
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".graphgrade-bundle-", suffix=".zip", dir=zip_path.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w") as zf:
            for arcname in sorted(entries, key=lambda a: (a not in ("setup.sh", "run_autograder"), a)):
                data, mode = entries[arcname]
                _add(zf, arcname, data, mode)
        os.chmod(tmp, 0o644)
        os.replace(tmp, zip_path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return zip_path
