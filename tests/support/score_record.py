"""The scores every deterministic test submission of the CUDA-graph lab gets, recorded once and
compared after a change that must not move them (issue 32: the lab moved into a pack; every
test submission scores exactly as before, differences only where an issue says so).

    python tests/support/score_record.py write   # record (tests/support/score_record.json)
    python tests/support/score_record.py check   # grade again and list every difference

The subjects: the reference, the untouched template, every named mutant and baseline of the
audit, the correct variants and the solutions under tests/. Hostile submissions are not here:
their scores depend on the sandbox layers the machine grants (tests/test_hostile.py holds them).
Graded through the same isolated path as students (the audit's settings: mutants import the
reference from the trusted import root).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).with_name("score_record.json")


def subjects() -> dict[str, Path]:
    """Name (relative to the repository) -> the path graded."""
    found: dict[str, Path] = {}
    candidates = [
        ROOT / "reference" / "cudagraph.py",
        ROOT / "student_template" / "cudagraph.py",
        *sorted((ROOT / "reference" / "mutants").glob("[!_]*.py")),
        *sorted((ROOT / "reference" / "mutants" / "baselines").glob("[!_]*.py")),
        *sorted(p for p in (ROOT / "tests" / "correct_variants").iterdir() if p.is_dir()),
        ROOT / "tests" / "support" / "handout_literal",
        *sorted(p for p in (ROOT / "tests" / "support" / "solutions").iterdir() if p.is_dir()),
        *sorted(p for p in (ROOT / "tests" / "support" / "answer_solutions").iterdir() if p.is_dir()),
    ]
    for path in candidates:
        found[str(path.relative_to(ROOT))] = path
    return found


def grade_all() -> dict[str, dict]:
    """Every subject's score and per-case (status, score), against every spec of the default suite."""
    sys.path.insert(0, str(ROOT))
    from grader.commands.audit import audit_settings
    from grader.commands.grade import grade_submissions
    from grader.run.runner import Zygote
    from grader.suite.loader import load_suite

    named = subjects()
    with Zygote() as zygote, tempfile.TemporaryDirectory(prefix="graphgrade-scores-") as out:
        loaded = load_suite(ROOT / "specs")
        graded = grade_submissions(
            zygote, loaded, loaded.suite.specs, list(named.values()), Path(out), audit_settings(), jobs=2
        )
    return {
        name: {
            "score": g.report.score,
            "max_score": g.report.max_score,
            "problem": bool(g.report.problem),
            "cases": {f"{c.spec}/{c.case}": [c.status, c.score] for c in g.report.cases},
        }
        for name, g in zip(named, graded)
    }


def differences(before: dict[str, dict], after: dict[str, dict]) -> list[str]:
    """One line per subject or case whose record moved."""
    lines = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old is None or new is None:
            lines.append(f"{name}: {'new' if old is None else 'gone'}")
            continue
        if (old["score"], old["max_score"], old["problem"]) != (new["score"], new["max_score"], new["problem"]):
            lines.append(f"{name}: score {old['score']}/{old['max_score']} -> {new['score']}/{new['max_score']}")
        for uid in sorted(set(old["cases"]) | set(new["cases"])):
            if old["cases"].get(uid) != new["cases"].get(uid):
                lines.append(f"{name}: {uid}: {old['cases'].get(uid)} -> {new['cases'].get(uid)}")
    return lines


def main(argv: list[str]) -> int:
    if argv[1:] == ["write"]:
        RECORD.write_text(json.dumps(grade_all(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {RECORD}")
        return 0
    if argv[1:] == ["check"]:
        moved = differences(json.loads(RECORD.read_text(encoding="utf-8")), grade_all())
        print("\n".join(moved) or "no differences")
        return 1 if moved else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
