"""One claim per case: what each of the suite's buggy builds costs outside its own behaviour.

Each mutant in reference/mutants/ breaks one behaviour's rule (its ``TAG``). Graded on every
case of the shipped suite (hidden ones included) in this process, through the worker's
interpreter and the judge, it should lose points on its own behaviour and on the behaviours
the handout builds on it (docs/contract.md, "What each part's cases use"), and at most a few
elsewhere: issue 34's target is 3 points.

    python benchmarks/claims.py            # the table, the worst first
    python benchmarks/claims.py --limit 3  # exit 1 when a mutant costs more than 3 points outside

Not a timed benchmark: the figures are points, the same on any machine.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.judging.judge import judge_case  # noqa: E402
from grader.judging.scoring import add_points, split_points  # noqa: E402
from grader.observe.interpreter import observe_in_process  # noqa: E402
from grader.spec_model import point_group  # noqa: E402
from grader.suite.loader import load_suite  # noqa: E402

RUNNER_PARTS = ("shape-cache", "static-buffer", "single-launch-replay")
EXTENSIONS = ("piecewise", "padding", "warmup")  # the stretch parts built on GraphRunner
# What the handout builds on each behaviour: a bug there may also cost these (docs/contract.md,
# "What each part's cases use"). A replay happens only on a cache hit ("Replay (key seen)"), so
# the two replay behaviours build on the shape cache; they do not build on each other.
BUILT_ON = {
    "launch-counter": ("eager", *RUNNER_PARTS, *EXTENSIONS, "fusion"),
    "eager": (*RUNNER_PARTS, *EXTENSIONS, "fusion"),
    "shape-cache": ("static-buffer", "single-launch-replay", *EXTENSIONS),
    "static-buffer": EXTENSIONS,
    "single-launch-replay": EXTENSIONS,
}


def mutant_costs(specs_dir: Path = ROOT / "specs") -> list[tuple[str, str, dict[str, float], float]]:
    """Per mutant: its name, its tag, points lost per tag, and points lost outside its own
    tag and those built on it; the most outside first."""
    loaded = load_suite(specs_dir)
    share = {}
    tag_of = {}
    for spec in loaded.suite.specs:
        for case, points in zip(spec.cases, split_points(spec.points, len(spec.cases))):
            share[case.uid], tag_of[case.uid] = points, spec.tag
    rows = []
    for path in sorted((ROOT / "reference" / "mutants").glob("*.py")):
        if path.name.startswith("_"):
            continue
        name = f"reference.mutants.{path.stem}"
        sys.modules.pop(name, None)
        module = importlib.import_module(name)
        lost: dict[str, list[float]] = {}
        for case in loaded.suite.cases:
            if point_group(tag_of[case.uid]) == "answers":
                continue  # the notebook answers: a mutant is a code bug, and ships no answers.md
            mutant = importlib.reload(module)  # a fresh module per case, as the worker gives
            verdict = judge_case(case, loaded.oracles[case.uid], observe_in_process(mutant, case.uid, case.steps))
            if verdict.status != "passed":
                lost.setdefault(tag_of[case.uid], []).append(share[case.uid])
        per_tag = {tag: add_points(points) for tag, points in sorted(lost.items())}
        allowed = {module.TAG, *BUILT_ON.get(module.TAG, ())}
        outside = add_points(points for tag, points in per_tag.items() if tag not in allowed)
        rows.append((path.stem, module.TAG, per_tag, outside))
    return sorted(rows, key=lambda row: (-row[3], row[0]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=None, help="exit 1 when a mutant costs more outside")
    args = parser.parse_args(argv)
    rows = mutant_costs()
    print(f"{'mutant':40} {'own tag':22} {'outside':>8}  lost per tag")
    for name, tag, per_tag, outside in rows:
        spread = ", ".join(f"{t} {p:g}" for t, p in per_tag.items())
        print(f"{name:40} {tag:22} {outside:8.2f}  {spread}")
    worst = max((row[3] for row in rows), default=0.0)
    over = [row[0] for row in rows if args.limit is not None and row[3] > args.limit]
    print(
        f"\n{len(rows)} mutants; the most any costs outside its own behaviour and those built on it: {worst:g} points"
    )
    if over:
        print(f"over {args.limit:g}: {', '.join(over)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
