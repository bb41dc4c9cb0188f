"""First-cause precision: how often "Fix this first" names the bug's own line (issue 34, point 3).

Two sets of buggy submissions, measured apart:

* the suite's own mutants (reference/mutants/): the reference with one bug edited in; a hit is a
  first cause naming a line the mutant's edit wrote;
* benchmarks/bugs/: 16 bugs written independently of the suite, each a whole student's
  cudagraph.py whose second line names the bug's lines (``# bug-lines: 42, 43``); no test reads
  them, so the figure on them is not one the suite was tuned to.

Each set is written out as a class of students, graded with ``graphgrade grade`` (the whole
suite: the staff view, where every failing case is shown in full), and for each submission the
first cause report.json records for staff (``first_cause.staff``, the cause the staff page's
"Fix this first" shows) is read: a hit when the line it names is one of the bug's lines.

    python benchmarks/first_cause.py            # both tables and both figures
    python benchmarks/first_cause.py --keep DIR # keep the classes and the reports
    python benchmarks/first_cause.py --only fuse_only_pairs warmup_off_by_one  # some of them (a quick look)

Not a timed benchmark: the figure is a count, the same on any machine.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.judging.report_reading import read_report  # noqa: E402
from grader.spec_model import point_group  # noqa: E402
from grader.suite.loader import load_suite  # noqa: E402
from reference.mutants._base import REFERENCE_SOURCE, apply_edits  # noqa: E402


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


# Mutants whose bug is a statement that is not there: the line the benchmark counts is a comment,
# a placeholder or a neighbour the edit left, which no observation of what ran can name (a
# trace reports lines that ran); or a class body, which runs at import, outside every step.
# benchmarks/README.md gives each reason; the figure is printed raw and over the rest.
UNNAMEABLE = {
    "counter_reset_noop": "the missing `cls.n = 0` (a `pass` left)",
    "never_cache": "the missing lookup (a comment left)",
    "padding_rows_zeroed_once": "the missing zeroing (a comment left)",
    "replay_leaves_entry_output": "the missing `entry.output = y` (a `pass` left)",
    "replay_no_launch": "the missing bump (its neighbour counted)",
    "state_record_without_attempt": "the missing assignment (a comment left)",
    "graphs_shared_between_runners": "a class body (runs at import) and the deleted line's neighbours",
}

BUGS = ROOT / "benchmarks" / "bugs"
_BUG_LINES = re.compile(r"^# bug-lines: (?P<lines>\d+(?:, *\d+)*)$", re.M)


def bug_sources() -> dict[str, tuple[str, set[int]]]:
    """Each independently written bug of benchmarks/bugs/: its source and its bug's lines."""
    out = {}
    for path in sorted(BUGS.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        found = _BUG_LINES.search(source)
        if found is None:
            raise SystemExit(f"{path}: no '# bug-lines: N, M' line names the bug's lines")
        out[path.stem] = (source, {int(n) for n in found.group("lines").split(",")})
    return out


def code_specs(into: Path) -> Path:
    """The shipped spec files but the notebook answers' (a mutant is a code bug and ships no
    answers.md: its first cause would be the missing answers)."""
    into.mkdir(parents=True)
    for spec_file in load_suite(ROOT / "specs").suite.files:
        if not all(point_group(spec.tag) == "answers" for spec in spec_file.specs):
            shutil.copy(spec_file.path, into / Path(spec_file.path).name)
    return into


def measure(work: Path, sources: dict[str, tuple[str, set[int]]] | None = None) -> list[tuple[str, str, bool]]:
    """Per submission (the mutants unless ``sources`` are given): its name, the first cause's
    ``file:line`` ("" when it names no line of the code), and whether that is the bug's line."""
    sources = mutant_sources() if sources is None else sources
    if not sources:
        return []
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
        first = report.first_cause.staff if report.first_cause is not None else None
        origin = f"{first.file}:{first.line}" if first is not None and first.line else ""
        rows.append((name, origin, bool(first and first.line in written)))
    return rows


def table(title: str, rows: list[tuple[str, str, bool]]) -> str:
    lines = [f"{title:40} {'first cause names':28} bug's line?"]
    for name, origin, hit in rows:
        lines.append(f"{name:40} {origin or '(no line of the code)':28} {'yes' if hit else 'no'}")
    hits = sum(hit for *_, hit in rows)
    named = sum(1 for _, origin, _ in rows if origin)
    lines.append(
        f"{title}: {hits} of {len(rows)} first causes name the bug's own line "
        f"({16 * hits / len(rows):.1f} of every 16); {named} name some line of the code"
    )
    nameable = [hit for name, _, hit in rows if name not in UNNAMEABLE]
    if len(nameable) < len(rows):
        lines.append(
            f"{title}: {sum(nameable)} of the {len(nameable)} whose line an observation can name "
            f"({16 * sum(nameable) / len(nameable):.1f} of every 16; not nameable: {', '.join(sorted(UNNAMEABLE))})"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=None, help="grade in this folder and keep it")
    parser.add_argument(
        "--only", nargs="+", default=None, metavar="NAME", help="grade only these mutants and bugs (a quick look)"
    )
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="graphgrade-first-cause-"))
    work.mkdir(parents=True, exist_ok=True)

    def chosen(sources: dict[str, tuple[str, set[int]]]) -> dict[str, tuple[str, set[int]]]:
        return sources if args.only is None else {k: v for k, v in sources.items() if k in args.only}

    try:
        mutants = measure(work / "mutants", chosen(mutant_sources()))
        bugs = measure(work / "bugs", chosen(bug_sources()))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print("\n\n".join(table(title, rows) for title, rows in (("mutants", mutants), ("bugs", bugs)) if rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
