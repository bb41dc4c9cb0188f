"""Throughput of ``graphgrade grade`` on a synthetic class, against the hand-written baseline.

    python benchmarks/throughput.py                # 1,000 submissions, --jobs 2, full suite
    python benchmarks/throughput.py --n 200 --sample 30 --profile-n 8 --process

In one run it

1. builds a class of N submissions in a temporary folder: copies of the reference and of a
   few buggy variants of it (each copy made byte-distinct by a comment holding its index, so
   no content cache could help);
2. grades the whole class cold (an empty cache) with ``graphgrade grade --jobs J`` and the
   full suite, as a default install does: ``--isolation module`` (one sandboxed worker per
   submission, each case against a freshly executed copy of it) and without the optional
   similarity extra (``--no-similarity``);
3. right after, times the baseline a course would write by hand: ``baseline_test_template.py``,
   one plain pytest file run once per submission (``python -m pytest -q -p no:cacheprovider``),
   two at a time, on an evenly spread sample of the class, extrapolated to N;
4. grades the class cold again with the similarity extra (compared in a background process
   while the class is graded), with ``--isolation process`` when asked (``--process``), and
   regrades it from the cache after one spec's steps change and after one check's expected
   value changes;
5. prints the rates, their ratio, and whether the targets are met.

It prints figures; it asserts nothing. It also grades a slice of the class (``--profile-n``)
in this process, splitting the CPU per case between the grader's own process and the worker
processes, and measures the in-process floor on the same slice (see :func:`floor`): what each
case costs with no isolation at all, observe + decode + judge + score + write the submission's
reports in one process. The goal is total CPU per case within 1.5x of that floor.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling below, whatever the command line

from regrades import RECORD, cache_line, edited_specs, record, rewritten  # noqa: E402

REFERENCE = ROOT / "reference" / "cudagraph.py"
BASELINE = Path(__file__).resolve().with_name("baseline_test_template.py")
TARGET_RATIO = 6.0  # cold throughput against the baseline (issue 35)
FLOOR_RATIO = 1.5  # CPU per case against the in-process floor
REJUDGE_TARGET = 10.0  # a check-only rejudge, times faster than cold
ONE_SPEC_TARGET = 4.0  # a one-spec regrade, times faster than cold


# Buggy variants: (name, text to find in the reference, replacement). Each must apply exactly once.
BUGS = {
    "no_replay": (
        "        entry = self.graphs.get(key)  # Constraint 1: one graph per shape\n",
        "        entry = None  # bug: every call captures again\n",
    ),
    "fresh_buffer": (
        "        self._load(entry.static_input, x)\n        y = entry.static_input\n",
        "        entry.static_input = entry.static_input.copy()  # bug: a new buffer on every replay\n        self._load(entry.static_input, x)\n        y = entry.static_input\n",
    ),
    "no_padding_slice": (
        "        return np.array(output[: x.shape[0]], copy=True)\n",
        "        return np.array(output, copy=True)  # bug: the padded rows are returned too\n",
    ),
    "no_stretch": ("class _FusedElementwise:", None),  # the core lab only: everything from fusion on is cut
}
# Of every 8 submissions: 4 correct, one of each bug.
MIX = (
    "reference",
    "no_replay",
    "reference",
    "fresh_buffer",
    "reference",
    "no_padding_slice",
    "reference",
    "no_stretch",
)


def variant_sources() -> dict[str, str]:
    reference = REFERENCE.read_text()
    sources = {"reference": reference}
    for name, (find, replace) in BUGS.items():
        if reference.count(find) != 1:
            raise SystemExit(f"benchmark: the {name} variant no longer applies to {REFERENCE} (text not found once)")
        sources[name] = reference[: reference.index(find)] if replace is None else reference.replace(find, replace)
    return sources


def build_class(root: Path, n: int) -> tuple[list[Path], list[str]]:
    sources = variant_sources()
    paths, kinds = [], []
    for i in range(n):
        kind = MIX[i % len(MIX)]
        sub = root / f"student{i:05d}"
        sub.mkdir()
        (sub / "cudagraph.py").write_text(sources[kind] + f"\n# submission {i} ({kind})\n")
        paths.append(sub)
        kinds.append(kind)
    return paths, kinds


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def compile_grader() -> str:
    """Compile the grader's own modules to bytecode, as installing its wheel does. A checkout
    installed in editable mode has none until a run writes it, and with PYTHONDONTWRITEBYTECODE
    set (a sandbox, a CI image) no run does: every process of every grading then compiles the
    grader's source again (about 0.35 s of CPU per run, more than a regrade's whole judging)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    packages = [p for p in ("grader", "reports", "labs", "specs") if (ROOT / p).is_dir()]
    done = subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *packages], cwd=ROOT, env=env, capture_output=True, check=False
    )
    return "compiled to bytecode" if done.returncode == 0 else f"not compiled ({done.stderr.decode()[-200:]})"


def grade_class(
    paths: list[Path], out: Path, jobs: int, extra: list[str]
) -> tuple[float, float, subprocess.CompletedProcess]:
    cmd = [
        sys.executable,
        "-m",
        "grader.commands.cli",
        "grade",
        *map(str, paths),
        "--out",
        str(out),
        "--jobs",
        str(jobs),
        *extra,
    ]
    cpu0, t0 = children_cpu(), time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    return time.monotonic() - t0, children_cpu() - cpu0, proc


def run_baseline(paths: list[Path], work: Path, parallel: int) -> tuple[float, float, list[int]]:
    """Run the pytest baseline once per submission, ``parallel`` at a time; (wall, cpu, exit codes)."""
    dirs = []
    for path in paths:
        d = work / path.name
        shutil.copytree(path, d)
        shutil.copyfile(BASELINE, d / "test_cudagraph.py")
        dirs.append(d)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    def one(d: Path) -> int:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_cudagraph.py"]
        return subprocess.run(cmd, cwd=d, env=env, capture_output=True, timeout=600, check=False).returncode

    cpu0, t0 = children_cpu(), time.monotonic()
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        codes = list(pool.map(one, dirs))
    return time.monotonic() - t0, children_cpu() - cpu0, codes


class _Meter:
    """Thread CPU time spent inside wrapped functions (the profiler's own bookkeeping, nothing more)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}  # in the order the wrappers were made
        self.depth = threading.local()
        self.lock = threading.Lock()
        self.wrapped: list = []  # (owner, attribute, the function it held)

    def wrap(self, owner, attr: str, label: str) -> None:
        inner = getattr(owner, attr)
        self.seconds[label] = 0.0

        def timed(*args, **kwargs):
            depth = getattr(self.depth, label, 0)
            setattr(self.depth, label, depth + 1)
            t0 = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                setattr(self.depth, label, depth)
                if depth == 0:
                    spent = time.thread_time() - t0
                    with self.lock:
                        self.seconds[label] += spent

        setattr(owner, attr, timed)
        self.wrapped.append((owner, attr, inner))

    def unwrap(self) -> None:
        for owner, attr, inner in reversed(self.wrapped):
            setattr(owner, attr, inner)
        self.wrapped.clear()


def profile(paths: list[Path], jobs: int, show: bool = True) -> float:
    """Grade a slice of the class in this process and split the CPU: grader process vs workers.
    Returns the total CPU per case (ms); prints the split when ``show``."""
    import grader
    import grader.commands.grade
    import grader.judging.scoring
    import grader.observations
    from grader.commands.grade import grade_submissions
    from grader.commands.report_writers import ReportWriters
    from grader.run.runner import RunSettings, Zygote
    from grader.suite.loader import load_suite

    meter = _Meter()
    with tempfile.TemporaryDirectory(prefix="graphgrade-profile-") as tmp:
        kids0 = children_cpu()
        with Zygote():  # a zygote alone: what starting one costs (once per grading run)
            pass
        zygote_start = children_cpu() - kids0
        # the report renderers' start, also once per grading run: importing them (Jinja) and
        # compiling their templates on the first page written
        cpu0 = time.process_time()
        _warm_reports(Path(tmp) / "warm-up")
        reports_start = time.process_time() - cpu0
        # wrapped after the renderers' start (which would count in "write" otherwise), and
        # unwrapped at the end (the floor runs unmetered)
        meter.wrap(grader.commands.grade, "run_submission", "run cases (pipes, frames, decoding)")
        meter.wrap(grader.observations, "decode_observations", "  of which decoding observations")
        meter.wrap(grader.commands.grade, "build_report", "judge and score")
        meter.wrap(grader.judging.scoring, "judge_case", "  of which judge_case")
        meter.wrap(ReportWriters, "write", "hand each report to a writer process (pickling it)")
        writers_cpu = []  # the writer processes' CPU, known once they have ended
        end_writers = ReportWriters.close

        def close_writers(self) -> None:
            end_writers(self)
            writers_cpu.append(self.cpu_s)

        ReportWriters.close = close_writers
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        with Zygote() as zygote:  # closing it waits for it, so its workers' and cases' CPU is counted
            loaded = load_suite(ROOT / "specs")
            cpu0 = resource.getrusage(resource.RUSAGE_SELF)
            t0 = time.monotonic()
            graded = grade_submissions(
                zygote, loaded, loaded.suite.specs, paths, Path(tmp) / "out", RunSettings(), jobs=jobs
            )
            wall = time.monotonic() - t0
            cpu1 = resource.getrusage(resource.RUSAGE_SELF)
            meter.unwrap()
            ReportWriters.close = end_writers
        kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cases = sum(len(g.report.cases) for g in graded)
    per = 1000.0 / cases
    grader_u, grader_s = cpu1.ru_utime - cpu0.ru_utime, cpu1.ru_stime - cpu0.ru_stime
    work_u, work_s = kids1.ru_utime - kids0.ru_utime, kids1.ru_stime - kids0.ru_stime
    writing = sum(writers_cpu)
    work = work_u + work_s - zygote_start - writing
    total = (grader_u + grader_s + writing + work) * per
    if not show:
        return total
    print(
        f"\nper case: {len(paths)} submissions, {cases} cases, --jobs {jobs}, graded in this process (--isolation module, no cache)"
    )
    print(f"  wall                     {wall * per:6.2f} ms per case ({wall:.2f} s)")
    print(
        f"  grader process CPU       {(grader_u + grader_s) * per:6.2f} ms per case (user {grader_u * per:.2f}, sys {grader_s * per:.2f}; the report"
    )
    print(
        f"                           renderers' start, {reports_start:.2f} s once per run, taken out), in its threads:"
    )
    for label, seconds in meter.seconds.items():
        print(f"    {label:<56} {seconds * per:6.3f} ms")
    print(f"  report writer processes  {writing * per:6.2f} ms per case (report.json, report.html, staff.html,")
    print("                           results.json, junit.xml; forked from the grader process)")
    print(f"  worker processes CPU     {work * per:6.2f} ms per case (user+sys of the zygote's workers;")
    print(f"                           the zygote's own start, {zygote_start:.2f} s once per run, taken out;")
    print(f"                           {(kids1.ru_minflt - kids0.ru_minflt) / cases:.0f} minor page faults per case)")
    print(f"  total                    {total:6.2f} ms CPU per case")
    return total


def _warm_reports(out: Path) -> None:
    """Import the report renderers and write one small report with each (compiling every template
    a submission's reports use), as the first submission of a grading run does."""
    from grader.commands.grade import _write_outputs
    from grader.judging.results import CaseResult, Report, SpecSummary
    from reports import write_batch_outputs

    spec = SpecSummary("warm-up", "Warm-up", "core", 1.0, "visible", "", "", 1.0, 1.0)
    hidden = SpecSummary("warm-up-hidden", "Warm-up", "core", 1.0, "hidden", "", "", 0.0, 1.0)
    cases = (
        CaseResult("warm-up", "a", "core", "passed", 1.0, 1.0, ""),
        CaseResult("warm-up-hidden", "b", "core", "failed", 0.0, 1.0, "no", visibility="hidden", redacted=True),
    )
    report = Report("warm-up", 1.0, 2.0, cases, (spec, hidden))
    _write_outputs(report, out / "warm-up")
    write_batch_outputs([report], [out / "warm-up"], out)


def floor(paths: list[Path], specs_dir: Path | None = None) -> tuple[float, dict[str, float]]:
    """The in-process floor: the work each submission needs whatever its isolation, done for the
    same cases in this one process with no sandbox, worker, pipe or copy. Per submission: every
    case observed against a freshly executed copy of the submission (its module code compiled
    once, and the methods its dataclasses generate, as a worker does), its observations
    encoded and decoded (the one JSON form both sides judge from), judged and scored into the
    submission's report, and that report written as ``grade`` writes it (report.json,
    report.html, staff.html, results.json, junit.xml: the same renderers, into a temporary
    folder). The renderers' start (importing Jinja, compiling the
    templates) is taken out, as in :func:`profile`; so is everything isolation-specific (the
    zygote, the workers, putting a worker's process back between cases, the pipes and frames,
    the output log) and the integrity scan (a staff note about the code, not grading).
    Returns (ms CPU per case, its parts in ms per case); the integrity scan is timed beside it,
    as a part that is not in the floor. ``specs_dir``: the suite (default: the shipped specs)."""
    import types

    import grader
    from grader import framing, observations
    from grader.commands.grade import _write_outputs
    from grader.judging.integrity import integrity_flags
    from grader.judging.scoring import build_report
    from grader.observe.interpreter import run_case
    from grader.run.runner import CaseRun, SubmissionRun
    from grader.run.worker.inprocess import compile_generated_once
    from grader.suite.loader import load_suite

    loaded = load_suite(specs_dir or ROOT / "specs")
    specs = loaded.suite.specs
    cases = [c for s in specs for c in s.cases]
    codes = [compile(p.joinpath("cudagraph.py").read_text(), str(p / "cudagraph.py"), "exec") for p in paths]
    compile_generated_once()  # as a worker does: a dataclass's generated methods compiled once
    parts = {"observe and decode": 0.0, "judge and score": 0.0, "write the reports": 0.0}
    scan = 0.0
    with tempfile.TemporaryDirectory(prefix="graphgrade-floor-") as tmp:
        _warm_reports(Path(tmp) / "warm-up")  # the renderers' start, once per run: not timed
        for path, code in zip(paths, codes):
            t0 = time.process_time()
            runs = []
            for case in cases:
                module = types.ModuleType("cudagraph")
                sys.modules["cudagraph"] = module
                exec(code, module.__dict__)
                frame = run_case(module, case.uid, case.steps)
                body, _ = framing.split_frame(frame)
                observation = observations.decode_observations(body, case.uid, len(case.steps))
                runs.append(
                    CaseRun(
                        uid=case.uid,
                        status="observed",
                        observation=observation,
                        message="",
                        output_tail="",
                        duration_s=0.0,
                    )
                )
            t1 = time.process_time()
            run = SubmissionRun(problem="", cases=tuple(runs), output_tail="", duration_s=0.0)
            report = build_report(path.name, specs, run, loaded, grader.__version__)
            t2 = time.process_time()
            _write_outputs(report, Path(tmp) / "out" / path.name)
            t3 = time.process_time()
            parts["observe and decode"] += t1 - t0
            parts["judge and score"] += t2 - t1
            parts["write the reports"] += t3 - t2
            integrity_flags(path)
            scan += time.process_time() - t3
    sys.modules.pop("cudagraph", None)
    per = 1000.0 / (len(paths) * len(cases))
    floor_ms = sum(parts.values()) * per
    parts = {k: v * per for k, v in parts.items()}
    parts["(not in the floor: the integrity scan, report.json's staff flags)"] = scan * per
    return floor_ms, parts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=1000, help="submissions in the synthetic class (default 1000)")
    parser.add_argument("--jobs", type=int, default=2, help="graphgrade grade --jobs (default 2)")
    parser.add_argument(
        "--sample", type=int, default=40, help="submissions the baseline runs, extrapolated to N (default 40)"
    )
    parser.add_argument("--baseline-parallel", type=int, default=2, help="baseline pytest runs at a time (default 2)")
    parser.add_argument(
        "--process", action="store_true", help="also grade the class with --isolation process (a process per case)"
    )
    parser.add_argument(
        "--profile-n", type=int, default=40, help="submissions graded for the per-case split and the floor (default 40)"
    )
    parser.add_argument("--keep", type=Path, default=None, help="build the class and outputs here and keep them")
    parser.add_argument(
        "--record",
        action="store_true",
        help=f"append this run's ratios to {RECORD.name} (one JSON line per run: the record kept per change)",
    )
    args = parser.parse_args(argv)
    if args.n < 1 or args.jobs < 1 or args.sample < 1 or args.profile_n < 1:
        parser.error("--n, --jobs, --sample and --profile-n must be at least 1")

    work = args.keep or Path(tempfile.mkdtemp(prefix="graphgrade-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        cls = work / "class"
        cls.mkdir()
        paths, kinds = build_class(cls, args.n)
        cores = os.cpu_count() or 1
        print(
            f"class: {args.n} submissions in {cls} ({', '.join(f'{kinds.count(k)} {k}' for k in dict.fromkeys(MIX))})"
        )
        print(
            f"machine: {cores} CPU cores, load average {os.getloadavg()[0]:.2f} (other work on the machine slows both sides)"
        )
        print(f"the grader's modules: {compile_grader()}, as an installed wheel's are")
        # What a default install grades with: no similarity extra (copydetect is an optional
        # extra, and staff-only); its cost is measured beside, in its own cold run.
        cache = ["--cache", str(work / "cache"), "--no-similarity"]

        # 1. graphgrade, the whole class, cold (an empty cache, which it fills)
        wall, cpu, proc = grade_class(paths, work / "out", args.jobs, cache)
        summary = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        print(
            f"\ngraphgrade grade --jobs {args.jobs} --cache EMPTY --no-similarity (full suite, --isolation module; "
            f"a default install, without the similarity extra): exit {proc.returncode}"
        )
        print(f"  {summary}")
        if proc.returncode != 0:
            print(proc.stderr[-2000:])
        means: dict[str, list[float]] = {}
        for path, kind in zip(paths, kinds):
            try:
                report = json.loads((work / "out" / path.name / "report.json").read_text())
                means.setdefault(kind, []).append(100.0 * report["score"] / report["max_score"])
            except (OSError, ValueError, KeyError):
                means.setdefault(kind, []).append(float("nan"))
        print("  mean score by variant: " + ", ".join(f"{k} {sum(v) / len(v):.1f}%" for k, v in means.items()))
        rate = args.n / wall
        print(
            f"  {args.n} submissions in {wall:.1f} s wall, {cpu:.1f} s CPU -> {rate:.2f} submissions/s ({cpu / args.n * 1000:.0f} ms CPU each; "
            f"{cpu / wall:.2f} of {cores} cores busy on average)"
        )

        # 2. the baseline, on a sample spread over the class, right after the cold run (load on a
        # shared machine drifts: the two sides of the throughput ratio are measured back to back)
        step = max(1, args.n // args.sample)
        sample = paths[::step][: args.sample]
        b_wall, b_cpu, codes = run_baseline(sample, work / "baseline", args.baseline_parallel)
        b_rate = len(sample) / b_wall
        failing = sum(1 for c in codes if c != 0)
        print(
            f"\nbaseline: pytest once per submission, {args.baseline_parallel} at a time, on {len(sample)} of the class ({failing} runs with failures)"
        )
        print(
            f"  {len(sample)} submissions in {b_wall:.1f} s wall, {b_cpu:.1f} s CPU -> {b_rate:.2f} submissions/s ({b_cpu / len(sample) * 1000:.0f} ms CPU each)"
        )
        print(f"  extrapolated: {args.n} submissions in {args.n / b_rate:.0f} s")

        # 1b. the same, with the similarity extra (compared in a background process while grading)
        s_wall, s_cpu, s_proc = grade_class(
            paths, work / "out-similarity", args.jobs, ["--cache", str(work / "cache-s")]
        )
        similarity_line = next(
            (line for line in s_proc.stderr.splitlines() if line.startswith(("similarity", "graphgrade: similarity"))),
            "",
        )
        print(
            f"\ngraphgrade grade --jobs {args.jobs} --cache EMPTY, with the similarity extra: exit {s_proc.returncode}"
        )
        print(f"  {similarity_line or 'no similarity line (is copydetect installed?)'}")
        print(
            f"  {args.n} submissions in {s_wall:.1f} s wall, {s_cpu:.1f} s CPU -> {args.n / s_wall:.2f} submissions/s ({s_cpu / args.n * 1000:.0f} ms CPU each)"
        )

        if args.process:
            p_wall, p_cpu, p_proc = grade_class(
                paths, work / "out-process", args.jobs, ["--no-cache", "--no-similarity", "--isolation", "process"]
            )
            print(f"\ngraphgrade grade --jobs {args.jobs} --no-cache --isolation process: exit {p_proc.returncode}")
            print(
                f"  {args.n} submissions in {p_wall:.1f} s wall, {p_cpu:.1f} s CPU -> {args.n / p_wall:.2f} submissions/s; module mode is {p_wall / wall:.2f}x faster"
            )

        # 3. regrades from the cache the cold run filled, each into a copy of the cold run's
        # output folder (as a regrade writes over the class's reports; copied before the clock starts)
        regrades = []
        for kind, label in (
            ("steps", "one spec's steps changed (launch-counter-basics: 3 cases)"),
            ("check", "one check's expected value changed"),
            ("same", "nothing changed (the same specs, the same output folder)"),
        ):
            shutil.copytree(work / "out", work / f"out-{kind}", symlinks=True)
            specs = [] if kind == "same" else ["--specs", str(edited_specs(work, kind))]
            r_wall, r_cpu, r_proc = grade_class(paths, work / f"out-{kind}", args.jobs, [*cache, *specs])
            regrades.append((label, r_wall, r_cpu, r_proc))
            print(f"\nregrade, {label}: exit {r_proc.returncode}")
            print(f"  {cache_line(r_proc)}; {rewritten(work / 'out', work / f'out-{kind}', paths)}")
            print(
                f"  {r_wall:.1f} s wall, {r_cpu:.1f} s CPU: {r_wall / wall:.3f} of the cold run's wall time ({wall / r_wall:.1f}x faster), {r_cpu / cpu:.3f} of its CPU"
            )

        # 4. where the time goes, and the floor
        # Measured A B B A (profile, floor, floor, profile) and averaged: a load that drifts
        # during the four runs weighs on both sides alike.
        sliced = paths[: args.profile_n]
        first_total = profile(sliced, args.jobs)
        first_floor, floor_parts = floor(sliced)
        second_floor, _ = floor(sliced)
        second_total = profile(sliced, args.jobs, show=False)
        total = (first_total + second_total) / 2
        floor_ms = (first_floor + second_floor) / 2
        print(
            f"  measured twice, A B B A: total {first_total:.2f} then {second_total:.2f} ms, floor {first_floor:.2f} then {second_floor:.2f} ms; the means are compared"
        )
        print(
            f"  in-process floor         {floor_ms:6.2f} ms CPU per case (observe + decode + judge + score + write the reports,"
        )
        print("                           each case against a fresh module, one process, no isolation):")
        for label, ms in floor_parts.items():
            print(f"    {label:<56} {ms:6.3f} ms")

        # 5. the comparison
        ratio = rate / b_rate
        print("\nresult")
        print(
            f"  cold: graphgrade {rate:.2f}/s, baseline {b_rate:.2f}/s: {ratio:.2f}x the baseline's throughput (target >= {TARGET_RATIO:g}x: {'met' if ratio >= TARGET_RATIO else 'NOT met'})"
        )
        print(
            f"  cold with the similarity extra: {args.n / s_wall:.2f}/s: {args.n / s_wall / b_rate:.2f}x the baseline's throughput"
        )
        print(
            f"  cold: {total:.2f} ms CPU per case against a floor of {floor_ms:.2f} ms (observe, decode, judge, score, write the reports; one process): {total / floor_ms:.2f}x the floor (goal <= {FLOOR_RATIO:g}x: {'met' if total / floor_ms <= FLOOR_RATIO else 'NOT met'})"
        )
        for (label, r_wall, r_cpu, _), target in zip(regrades, (ONE_SPEC_TARGET, REJUDGE_TARGET, None)):
            faster = wall / r_wall
            verdict = (
                "no target" if target is None else f"target >= {target:g}x: {'met' if faster >= target else 'NOT met'}"
            )
            print(
                f"  regrade, {label}: {r_wall / wall:.3f} of cold (wall), {r_cpu / cpu:.3f} (CPU): {faster:.1f}x faster than cold ({verdict})"
            )
        print(f"  load average at the end: {os.getloadavg()[0]:.2f}")
        broken = [p.returncode for p in (proc, s_proc, *(r[3] for r in regrades)) if p.returncode not in (0, 1)]
        if args.record:
            record(
                args,
                ratio,
                total / floor_ms,
                wall / regrades[1][1],
                wall / regrades[0][1],
                wall / regrades[2][1],
                cores,
            )
        if broken:  # a grading run that did not finish: the benchmark itself is broken
            print(f"\nbenchmark broken: graphgrade grade exited {broken}")
            return 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
