"""Grade many submissions: isolated runs in parallel, judging and scoring here, reports written.

The zygote must be started before the specs are loaded (see ``grader.run.worker.zygote``);
:func:`grade_submissions` takes one that already runs.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import hashlib
import itertools
import os
import queue
import re
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import grader
from grader.commands import rejudging, report_manifest
from grader.commands.report_writers import ReportWriters, WriteFailed, writer_count
from grader.judging.answers import read_answers
from grader.judging.first_cause import relocated, to_relocate
from grader.judging.integrity import ScanService
from grader.judging.results import Report
from grader.judging.scoring import build_report
from grader.lab import active as active_lab
from grader.run.relocating import rerun_traced, stored_traced, traced
from grader.run.runner import (
    RunSettings,
    SandboxFailure,
    ScratchArea,
    SubmissionRun,
    Zygote,
    case_messages,
    run_submission,
    running_as_root,
)
from grader.safetext import one_line as safe_one_line
from grader.spec_model import Spec
from grader.suite.loader import LoadedSuite

SWITCH_INTERVAL_S = 0.001  # while grading (see grade_submissions)


MAX_NAME_CHARS = 96  # of an output folder's name, before a "-N" that tells equal ones apart
_HASH_CHARS = 12  # the hex digits a cut name ends with


def submission_name(path: Path) -> str:
    """OUT/<name>: the directory's name; for a file, its stem, or the name of the directory
    holding it when the file is the lab's own module file (``alice/MODULE.py`` is alice).
    Letters, digits, ``.``, ``_`` and ``-`` only, and at most MAX_NAME_CHARS: a longer name is
    cut and ends with a hash of the whole name, so that two names cut alike still differ."""
    if path.is_file():
        raw = path.resolve().parent.name if path.name == active_lab().module_file else path.stem
    else:
        raw = path.resolve().name
    name = re.sub(r"[^A-Za-z0-9._-]", "_", raw).strip(".") or "submission"
    if len(name) <= MAX_NAME_CHARS:
        return name
    digest = hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:_HASH_CHARS]
    return f"{name[: MAX_NAME_CHARS - _HASH_CHARS - 1].rstrip('.')}-{digest}"


def unique_names(paths: Iterable[Path]) -> list[str]:
    """One output folder name per submission, distinct from every other name given (alice,
    alice-2, ...) and from the batch files beside them; each fits a file system's 255 bytes."""
    taken = {"summary.html", "grades.csv", "similarity.json", "similarity.html", "shard.json"}
    names = []
    for path in paths:
        base = submission_name(path)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        names.append(name)
    return names


def run_order(specs: tuple[Spec, ...]) -> tuple[Spec, ...]:
    """Every visible spec's cases run before any other case. A case may leave what it was given
    (a hidden case's inputs) in the submission's scratch directory; run last, it has no later case
    shown in detail to print it into. Reports keep the specs' own order."""
    return tuple(s for s in specs if s.visibility == "visible") + tuple(s for s in specs if s.visibility != "visible")


def look_ahead_for(specs: tuple[Spec, ...]) -> tuple[bool, ...]:
    """Per case: may the next case's message wait in the worker's pipe while this one runs? Only
    when both are shown alike (both visible, or both redacted), so that output a case prints
    early can never land in the tail of a case shown in more detail (see run_submission)."""
    shown = [spec.visibility == "visible" for spec in specs for _ in spec.cases]
    return tuple(a == b for a, b in itertools.pairwise(shown)) + (False,)


@dataclass(frozen=True)
class GradedSubmission:
    path: Path
    name: str
    report: Report
    out_dir: Path
    grader_failed: bool = False  # the grader, not the submission, failed on this one
    is_reference: bool = False  # the bundled solution, graded because no submission was given


def _write_outputs(
    report: Report, out_dir: Path, hidden_visibility: str = "hidden", staff: bool = True, judged: dict | None = None
) -> int:
    """A submission's report.json and the files rendered from it (the registry reports.outputs);
    returns how many files were written. Only what changed is written: nothing when the folder
    already holds the files these inputs render (see grader.commands.report_manifest), else each
    file whose bytes differ from the file there (the others keep their inode and mtime).
    ``judged``: what the report was judged from (grader.commands.rejudging), kept in the manifest."""
    from reports import write_file
    from reports.outputs import submission_files, submission_texts

    digest = report_manifest.inputs_digest(report, hidden_visibility, staff) if staff else ""
    if staff and report_manifest.unchanged(out_dir, digest, submission_files(), judged):
        return 0
    out_dir.mkdir(parents=True, exist_ok=True)
    report_manifest.forget(out_dir)
    texts = submission_texts(report, hidden_visibility, staff)
    written = 0
    for name, text in texts.items():
        if not report_manifest.holds(out_dir / name, text):
            write_file(out_dir / name, text)
            written += 1
    if staff:
        report_manifest.record(out_dir, digest, texts, judged)
    return written


def grade_submissions(
    zygote: Zygote,
    loaded: LoadedSuite,
    specs: tuple[Spec, ...],
    submissions: list[Path],
    out_dir: Path,
    settings: RunSettings,
    jobs: int = 2,
    on_done: Callable[[GradedSubmission, int, int], None] | None = None,
    hidden_visibility: str = "hidden",
    reference: Path | None = None,
    withheld_points: float = 0.0,
    cache=None,
    names: list[str] | None = None,
    student_only: bool = False,
) -> list[GradedSubmission]:
    """Grade every submission against ``specs``; writes OUT/<name>/ for each and returns them in order.

    ``hidden_visibility``: the Gradescope test visibility of hidden cases (see reports.gradescope).
    ``reference``: the bundled solution's path when it is graded, so that its line says so.
    ``withheld_points``: points of hidden specs that are not in ``loaded`` (a student kit's).
    ``cache``: a :class:`grader.run.cache.ObservationCache`; cases it holds are judged without running.
    ``names``: the output name of each submission (default :func:`unique_names`; a shard passes
    the names it got from the whole list).
    ``student_only``: write the student's files only (a run of the student kit): no staff.html,
    and for a single submission no summary.html or grades.csv."""
    in_run_order = run_order(specs)
    cases = tuple(c for s in in_run_order for c in s.cases)
    # a case with no call step left untraced runs its re-run exactly as it ran (a probe's lines
    # are traced in the first run): that re-run could locate nothing the first did not
    retraceable = frozenset(c.uid for c in cases if traced(c) != c)

    def lead_cases(report: Report) -> tuple[str, ...]:
        """The failed cases of ``report``'s first causes whose traced re-run may locate them better."""
        return tuple(uid for uid in to_relocate(report) if uid in retraceable)

    messages = case_messages(cases)  # encoded once, shared by every submission
    look_ahead = look_ahead_for(in_run_order)
    jobs = max(1, min(jobs, len(submissions)))
    names = unique_names(submissions) if names is None else names
    out_dir.mkdir(parents=True, exist_ok=True)
    if running_as_root():
        os.chmod(out_dir, 0o700)  # workers (other uids) can neither read nor write reports
    area = ScratchArea()
    slots: queue.Queue[int] = queue.Queue()
    for slot in range(jobs):
        slots.put(slot)
    redacted = tuple(s.visibility != "visible" for s in in_run_order for _ in s.cases)
    results: list[GradedSubmission | None] = [None] * len(submissions)
    done = 0
    lock = threading.Lock()
    # Judging is pure Python (it holds the GIL): two threads doing it at once take turns every
    # switch interval, each turn costing CPU (the GIL hand-over, cold caches) and gaining
    # nothing. One at a time; the other threads meanwhile wait on their workers' pipes.
    reporting = threading.Lock()
    stopping = threading.Event()
    scans = ScanService()  # the integrity scan's process, started by the first submission's grading

    def problem_report(index: int, message: str) -> Report:
        run = SubmissionRun.problem_only(message, cases)
        return replace(
            build_report(names[index], specs, run, loaded, grader.__version__, withheld_points),
            path=str(submissions[index]),
        )

    def judged(index: int, run: SubmissionRun, flags, answers, known=None) -> Report:
        """The submission's report, judged and scored from its run (in this process or a report
        process); ``known``: the case results of specs judged before from the same inputs."""
        report = replace(
            build_report(names[index], specs, run, loaded, grader.__version__, withheld_points, answers, known),
            flags=flags,
            path=str(submissions[index]),
        )
        return replace(report, answers=answers.report_lines(report.cases))

    def judge_and_write_cached(index: int, flags, answers, entry_key: str, keys: list[str]):
        """In a report process: a submission whose every case the cache holds, judged and its files
        written; (its report, the write's failure or None), or None when the cache does not hold
        it whole (the grader then grades it as usual)."""
        outcome = rejudging.rejudge(
            cache, entry_key, keys, cases, specs, out_dir / names[index], answers, digests_of(index, flags, answers)
        )
        if outcome is None:
            return None
        run, known, report, digests = outcome
        if report is None:  # not every spec judged before from the same inputs: those that were, not again
            report = judged(index, run, flags, answers, known)
            uids = lead_cases(report)
            if uids:  # its first causes' traced re-run, as the cache holds it (else it runs: graded here)
                part = rejudging.for_relocation(cache, entry_key, keys, cases, specs, run, report, uids)
                if part is None:
                    return None
                again = stored_traced(cache, (entry_key, part[0]), part[1], uids, part[2])
                if again is None:  # not held: it runs in a slot, and only that (see grade_one)
                    return rejudging.to_locate(report, entry_key, part, digests)
                report = relocated(report, judged(index, again, flags, answers, part[3]), uids)
        try:
            write_outputs(report, out_dir / names[index], hidden_visibility, judged=digests)
        except Exception as exc:  # noqa: BLE001 - the grader makes it the submission's problem, as it does a writer's
            return report, (type(exc).__name__, str(exc))
        return report, None

    suite = rejudging.suite_text(loaded, withheld_points)

    def digests_of(index: int, flags, answers):
        """What a report's digests (grader.commands.rejudging) take besides its cases: a function
        of the run's output tail and time, and of the digest of each case (by uid)."""

        def digests(output_tail: str, duration_s: float, case_digests: dict):
            fields = rejudging.report_fields(
                names[index], str(submissions[index]), grader.__version__, flags, output_tail, duration_s, suite
            )
            return rejudging.judged_digests(specs, case_digests, answers, fields)

        return digests

    def cold_digests(index: int, run: SubmissionRun, flags, answers) -> dict | None:
        """The digests of a report judged in this process from the frames its workers sent (those
        the cache keeps); None without a cache, or when a case has no frame."""
        if cache is None or run.problem:
            return None
        by_uid = {}
        for case_run in run.cases:
            if case_run.status != "observed" or not case_run.frame:
                return None
            by_uid[case_run.uid] = rejudging.case_digest(case_run.frame, case_run.output_tail, case_run.duration_s)
        found = digests_of(index, flags, answers)(run.output_tail, run.duration_s, by_uid)
        return None if found is None else found.as_json()

    def run_cases(index: int, apart: bool, counted: bool = False) -> SubmissionRun | None:
        """The submission's run, its cases run in a slot (those the cache does not hold, with a
        cache); None when ``apart`` and the cache now holds it whole (see run_with_cache)."""
        slot = slots.get()
        try:
            if cache is None:
                return run_submission(
                    zygote, area, slot, submissions[index], cases, settings, messages, look_ahead, redacted
                )
            from grader.run.cache import run_with_cache

            return run_with_cache(
                cache, zygote, area, slot, submissions[index], cases, settings, messages, look_ahead, redacted,
                judged_apart=apart, count=not counted,
            )  # fmt: skip
        finally:
            slots.put(slot)  # its cases have run: the next submission's start while this one is judged

    def judge_apart(index: int, flags, answers, keyed):
        """A submission the cache holds whole, judged and written by a report process, so that a
        rejudge spreads over the machine's cores (what it returns is what this process would have
        judged: the same function on the same data): (its report, the write's failure or None),
        or a :class:`rejudging.ToLocate` when its first causes' traced re-run must run first; None
        when it must be graded here. ``keyed``: its keys in the cache."""
        outcome = writers.judge(index, flags, answers, *keyed)
        if outcome is None or outcome[0] is None:  # not whole in the cache, or judging failed there
            return None
        if isinstance(outcome[0], rejudging.ToLocate):
            return outcome[0]
        report, write_failed = outcome[0]
        return report, None if write_failed is None else WriteFailed(*write_failed)

    def relocate(index: int, run: SubmissionRun, report: Report, flags, answers, part=None) -> Report:
        """``report`` with its first causes' failed cases located by their re-run with every call
        traced (grader.run.relocating; with a cache, only what it does not hold runs); ``report``
        itself when none failed or the re-run failed. ``part``: a :class:`rejudging.ToLocate`
        (``run`` is then its lead specs' cases alone, whose traced re-run the cache does not hold)."""
        uids = lead_cases(report)
        if not uids:
            return report
        from grader.run.cache import cache_keys

        try:
            if part is None:
                on, known = cases, rejudging.not_leads(report, specs, uids)
                keyed = cache_keys(submissions[index], settings, messages, redacted) if cache is not None else None
                again = stored_traced(cache, keyed, cases, uids, run) if keyed is not None else None
            else:  # the report process found the cache without it: only the lead specs' cases are at hand
                on, known, keyed, again = part.cases, part.known, (part.entry_key, list(part.keys)), None
            if again is None:  # not held whole: it runs in a slot (what the cache holds does not)
                slot = slots.get()
                try:
                    again = rerun_traced(zygote, area, slot, submissions[index], on, settings, uids, run, cache, keyed)
                finally:
                    slots.put(slot)
            with reporting:  # the lead cases' specs judged again: the other cases' observations are the first run's
                return relocated(report, judged(index, again, flags, answers, known), uids)
        except SandboxFailure:
            raise
        except Exception:  # noqa: BLE001 - a re-run only locates: its failure costs the better line, never the report
            return report

    def grade_one(index: int) -> None:
        """Grade, judge, write and print one submission. Whatever fails in the grader on the way
        becomes this submission's problem, in its report: never another's, never the batch's."""
        nonlocal done
        if stopping.is_set():
            return
        target = out_dir / names[index]
        failed = False
        scan = None
        write_failed: WriteFailed | None = None
        written = False
        digests = None  # what a report judged here was judged from (grader.commands.rejudging)
        try:
            scan = scans.submit(submissions[index])  # in a bounded process, while the cases run
            # a submission the cache holds (whole, or all but the cases a spec's edit changed) is
            # judged and written in a report process; a cold one here, from the frames its cases sent
            from grader.run.cache import cache_keys

            keyed = cache_keys(submissions[index], settings, messages, redacted) if judging_apart else None
            apart = keyed is not None and cache.holds(keyed[0])
            run = run_cases(index, apart)
            flags = scan.flags()  # waited for outside the judging lock
            answers = read_answers(submissions[index])  # the student's cited lines, read as data
            judged_apart = None
            if run is None:  # the cache holds it whole (once its missing cases ran): judged apart
                judged_apart = judge_apart(index, flags, answers, keyed)
                if judged_apart is None:
                    run = run_cases(index, False, counted=True)
            if isinstance(judged_apart, rejudging.ToLocate):  # judged there: only the traced re-run is left
                digests = judged_apart.digests
                report = relocate(index, judged_apart.run, judged_apart.report, flags, answers, judged_apart)
            elif judged_apart is not None:
                report, write_failed = judged_apart
                written = True
            else:
                with reporting:
                    report = judged(index, run, flags, answers)
                try:
                    digests = cold_digests(index, run, flags, answers)
                except Exception:  # noqa: BLE001 - without them the next regrade judges it all, nothing worse
                    digests = None
                report = relocate(index, run, report, flags, answers)
        except SandboxFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - a grader bug costs this submission's report, not the class's
            failed = True
            written = False
            report = problem_report(index, grader_problem("grading", exc))
        finally:
            if scan is not None and scan.result is None:
                scan.service.kill(scan.ident)  # a scan not waited for (a grading that failed) is ended
        try:
            if write_failed is not None:
                raise write_failed
            if not written:
                writers.write(report, target, hidden_visibility, digests)
        except Exception as exc:  # noqa: BLE001
            failed = True
            report = problem_report(index, grader_problem("writing its reports", exc))
            try:
                writers.write(report, target, hidden_visibility)
            except Exception:  # noqa: BLE001 - nothing more to do here; the exit status says it
                pass
        graded = GradedSubmission(
            submissions[index],
            names[index],
            report,
            target,
            failed,
            reference is not None and submissions[index] == reference,
        )
        with lock:
            done += 1
            if on_done:
                try:
                    on_done(graded, done, len(submissions))
                except Exception as exc:  # noqa: BLE001 - e.g. a terminal that cannot encode the line
                    report = dataclasses.replace(report, problem=grader_problem("printing its result", exc))
                    graded = dataclasses.replace(graded, report=report, grader_failed=True)
                    try:
                        writers.write(report, target, hidden_visibility)
                    except Exception:  # noqa: BLE001
                        pass
        results[index] = graded

    # Twice as many threads as slots: a slot is handed on as soon as its cases have run, so
    # the next submission's cases run while this one is judged and its reports written.
    pool = ThreadPoolExecutor(max_workers=min(2 * jobs, len(submissions)))
    # A thread whose worker has sent a result waits for the interpreter lock while another
    # judges: at most a switch interval (5 ms by default, two cases' worth of a worker's time,
    # enough to drain the cases queued ahead and leave the worker idle). A shorter interval
    # hands the lock to it sooner; the judging thread loses a few microseconds per hand-over.
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(min(switch_interval, SWITCH_INTERVAL_S))
    from reports.html import compile_templates

    compile_templates()
    report_manifest.renderers_digest()  # once, here: the forked writers inherit it
    # What exists now (the specs, their oracles, every module, the templates) lives as long as
    # the grading: the collector's full passes skip it instead of walking it again and again
    # (in a forked writer, walking it would also copy every page of it).
    gc.collect()
    gc.freeze()
    # Writing the reports, pure Python too, happens in processes of their own, forked now, while
    # this process has no other thread (see grader.commands.report_writers).
    write_outputs = functools.partial(_write_outputs, staff=not student_only)
    writers = ReportWriters(
        writer_count(jobs, len(submissions)), write_outputs, judge_and_write_cached if cache is not None else None
    )
    judging_apart = cache is not None and writers.forked > 0
    try:
        for future in [pool.submit(grade_one, i) for i in range(len(submissions))]:
            future.result()
    except BaseException:  # Ctrl-C or a sandbox failure: stop now, do not grade the rest first
        stopping.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        scans.close()
        writers.close()
        sys.setswitchinterval(switch_interval)
        gc.unfreeze()
        area.close()
    graded = [r for r in results if r is not None]
    if student_only and len(graded) == 1:
        return graded  # one student's own run: a class summary of one is no file of theirs
    return _write_batch(graded, out_dir, problem_report, names, staff=not student_only)


def grader_problem(doing: str, exc: BaseException) -> str:
    """A submission's problem when the grader, not the submission, failed on it."""
    name = exc.type_name if isinstance(exc, WriteFailed) else type(exc).__name__
    return f"the grader failed while {doing} ({name}: {safe_one_line(str(exc))[:300]}); please report this"


def _write_batch(
    graded: list[GradedSubmission], out_dir: Path, problem_report, names: list[str], staff: bool = True
) -> list[GradedSubmission]:
    """summary.html and grades.csv, always: a report that cannot be rendered in them is replaced
    by one that says the grader failed on it (and the run's exit status says so); should the
    batch files still fail, plain ones are written that list every submission and say why."""
    from reports import grades_csv, render_summary, report_link, write_batch_outputs

    def write(batch: list[GradedSubmission]) -> None:
        write_batch_outputs(
            [g.report for g in batch], [g.out_dir for g in batch], out_dir, [str(g.path) for g in batch], staff=staff
        )

    try:
        write(graded)
        return graded
    except Exception:  # noqa: BLE001 - find the submissions it failed on
        pass
    checked = []
    for g in graded:
        try:
            render_summary([g.report], ["report.html"])
            grades_csv([g.report])
            report_link(g.out_dir, out_dir)
            (Path(g.out_dir) / "staff.html").is_file()  # what the summary's links look at
            checked.append(g)
        except Exception as exc:  # noqa: BLE001
            report = problem_report(names.index(g.name), grader_problem("writing the class summary", exc))
            checked.append(dataclasses.replace(g, report=report, grader_failed=True))
    try:
        write(checked)
    except Exception as exc:  # noqa: BLE001 - the last resort: the files exist and say what happened
        _write_plain_batch(checked, out_dir, grader_problem("writing the class summary", exc))
        checked = [dataclasses.replace(g, grader_failed=True) for g in checked]
    return checked


def _write_plain_batch(graded: list[GradedSubmission], out_dir: Path, problem: str) -> None:
    """summary.html and grades.csv without the renderers: a name and a score per submission."""
    import csv
    import html
    import io

    from reports.csv_export import safe_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(["submission", "path", "total", "max"])
    rows = []
    for g in graded:
        writer.writerow([safe_cell(g.name), safe_cell(str(g.path)), f"{g.report.score:g}", f"{g.report.max_score:g}"])
        rows.append(f"<tr><td>{html.escape(g.name)}</td><td>{g.report.score:g} / {g.report.max_score:g}</td></tr>")
    (out_dir / "grades.csv").write_text(buf.getvalue(), encoding="utf-8", newline="")
    page = (
        '<!doctype html><html lang="en"><meta charset="utf-8"><title>graphgrade summary</title>'
        f"<p>{html.escape(problem)}</p><table>{''.join(rows)}</table></html>\n"
    )
    (out_dir / "summary.html").write_text(page, encoding="utf-8")
