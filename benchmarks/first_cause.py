"""First-cause precision: how often "Fix this first" names the bug's own line (issue 34, point 3).

Each mutant of reference/mutants/ is the reference with one bug edited in. This writes every
mutant out as a student's cudagraph.py, grades the lot with ``graphgrade grade`` (the whole
suite: the staff view, where every failing case is shown in full), and for each reads the cause
the report puts first (the staff page's "Fix this first") and where it points: the student's
line it names (report.json's ``origin``), if any. A hit is a first cause naming a line the
mutant's edit wrote.

    python benchmarks/first_cause.py            # the table and the precision
    python benchmarks/first_cause.py --keep DIR # keep the class and the reports

Not a timed benchmark: the figure is a count, the same on any machine.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.judging.results import read_report  # noqa: E402
from grader.spec.loader import load_suite  # noqa: E402
from grader.spec_model import point_group  # noqa: E402
from reference.mutants._base import REFERENCE_SOURCE, apply_edits  # noqa: E402
from reports.view import page_causes, spec_views  # noqa: E402


def mutant_sources() -> dict[str, tuple[str, set[int]]]:
    """Each mutant's source and the lines of it its edits wrote (1-based)."""
    reference = REFERENCE_SOURCE.read_text(encoding="utf-8")
    out = {}
    for path in sorted((ROOT / "reference" / "mutants").glob("*.py")):
        if path.name.startswith("_"):
            continue
        module = importlib.import_module(f"reference.mutants.{path.stem}")
        source = apply_edits(reference, module.EDITS, path.stem)
        matcher = difflib.SequenceMatcher(a=reference.splitlines(), b=source.splitlines(), autojunk=False)
        written = set()
        for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
            if tag in ("replace", "insert"):
                written.update(range(j1 + 1, j2 + 1))
            elif tag == "delete":
                written.update({j1, j1 + 1})  # a line taken out: the lines around the gap
        out[path.stem] = (source, written)
    return out


def code_specs(into: Path) -> Path:
    """The shipped spec files but the notebook answers' (a mutant is a code bug and ships no
    answers.md: its first cause would be the missing answers)."""
    into.mkdir(parents=True)
    for spec_file in load_suite(ROOT / "specs").suite.files:
        if not all(point_group(spec.tag) == "answers" for spec in spec_file.specs):
            shutil.copy(spec_file.path, into / Path(spec_file.path).name)
    return into


def measure(work: Path) -> list[tuple[str, str, bool]]:
    """Per mutant: its name, the first cause's origin ("" when it names no line), and a hit."""
    sources = mutant_sources()
    specs = code_specs(work / "specs")
    subs = []
    for name, (source, _) in sources.items():
        folder = work / "class" / name
        folder.mkdir(parents=True)
        (folder / "cudagraph.py").write_text(source, encoding="utf-8")
        subs.append(str(folder))
    done = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "grader",
            "grade",
            *subs,
            "--out",
            str(work / "out"),
            "--no-cache",
            "--no-similarity",
        ]
        + ["--specs", str(specs)],
        capture_output=True,
        text=True,
        cwd=work,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"graphgrade grade exited {done.returncode}: {done.stderr[-2000:]}")
    rows = []
    for name, (_, written) in sources.items():
        report = read_report(work / "out" / name / "report.json")
        ranked = [cause for cause in page_causes(spec_views(report, staff=True)).causes if cause.message]
        origin = ranked[0].lead.view.origin if ranked else ""  # the cause Fix this first shows
        line = int(origin.rsplit(":", 1)[1]) if origin else 0
        rows.append((name, origin, line in written))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=None, help="grade in this folder and keep it")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="graphgrade-first-cause-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        rows = measure(work)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'mutant':40} {'first cause names':28} bug's line?")
    for name, origin, hit in rows:
        print(f"{name:40} {origin or '(no line of the code)':28} {'yes' if hit else 'no'}")
    hits = sum(hit for *_, hit in rows)
    named = sum(1 for _, origin, _ in rows if origin)
    print(
        f"\n{hits} of {len(rows)} first causes name the bug's own line ({16 * hits / len(rows):.1f} of every 16); "
        f"{named} name some line of the code"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
