"""Run a submission's cases in isolation and collect what happened (the grader's side).

The grader never imports a submission. It asks the zygote for a confined worker
per submission (:mod:`grader.run.zygote_client`), in a scratch directory of its slot
(:mod:`grader.run.scratch`), sends it each case's steps (the next case's may wait in the
pipe while one runs), and reads back, over a dedicated pipe (never stdout,
:mod:`grader.run.pipes`), the case's observation frame and the worker's status frame.
Deadlines are the grader's: a case that runs past its timeout, or a submission past its
budget, has its whole process tree killed. After a hang, crash or malformed frame the worker
is replaced, so the remaining cases are graded normally. This module holds the records of a
run and the run itself, case by case.
"""

from __future__ import annotations

import secrets
import signal
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from grader import framing, observations
from grader.lab import active as active_lab
from grader.run.copying import SubmissionProblem
from grader.run.pipes import Tail, Worker
from grader.run.scratch import ScratchArea, running_as_root  # noqa: F401 - re-exported
from grader.run.worker.inprocess import RETIRE_EXITCODE
from grader.run.worker.sandbox import Limits
from grader.run.zygote_client import Zygote, lost_layers  # noqa: F401 - lost_layers: re-exported
from grader.spec_model import Case


@dataclass(frozen=True)
class RunSettings:
    case_timeout_s: float = 5.0
    import_timeout_s: float = 10.0
    submission_budget_s: float = 60.0
    limits: Limits = field(default_factory=Limits)
    landlock: bool = True
    import_paths: tuple[str, ...] = ()  # only for trusted code (the audit's mutants)
    tail_bytes: int = 4000
    # "module": a worker runs all its submission's cases, each against a freshly executed copy of
    # the submission (grader.run.worker.inprocess); "process": each case in a forked process of its own.
    isolation: str = "module"


@dataclass(frozen=True)
class CaseRun:
    """One case as the grader saw it: its own facts (status, time) and the worker's claims."""

    uid: str
    status: Literal["observed", "timeout", "crashed", "error", "skipped"]
    observation: observations.CaseObservation | None
    message: str
    output_tail: str
    duration_s: float
    # the observation as the worker sent it (for grader.run.cache, up to its bound; else empty)
    frame: bytes = field(default=b"", repr=False, compare=False)
    held_bytes: int = field(default=0, repr=False, compare=False)  # what its decoded arrays hold

    @classmethod
    def not_run(
        cls, uid: str, status: Literal["timeout", "crashed", "error"], message: str, output_tail: str = ""
    ) -> CaseRun:
        """A case that did not run (or never reported): no observation, no time."""
        return cls(uid=uid, status=status, observation=None, message=message, output_tail=output_tail, duration_s=0.0)


def _budget_used_up(uid: str, settings: RunSettings) -> CaseRun:
    """A case not run: the submission's time budget was used up before it."""
    message = f"not run: the submission used up its {settings.submission_budget_s:g} s time budget"
    return CaseRun.not_run(uid, "timeout", message)


@dataclass(frozen=True)
class SubmissionRun:
    problem: str  # a submission-wide problem (missing file, import error), or ""
    cases: tuple[CaseRun, ...]
    output_tail: str
    duration_s: float

    @classmethod
    def problem_only(cls, problem: str, cases: tuple[Case, ...]) -> SubmissionRun:
        """A submission none of whose cases could run: each is an error in ``problem``'s words."""
        return cls(problem, tuple(CaseRun.not_run(c.uid, "error", problem) for c in cases), "", 0.0)


class SandboxFailure(RuntimeError):
    """The grader could not confine a worker: a problem of the grading machine, never of a
    submission, so grading stops instead of blaming students."""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


# The array bytes one submission's observations may hold until it is judged, together (an
# honest submission's are a few KiB a case): past this, a case's result is not kept but is an error.
MAX_OBSERVED_BYTES = 64 << 20
# Bytes one submission's workers may send the grader in all (an honest one sends a few KiB a
# case): past this its remaining cases are not run, so no padding or trickling can cost the
# grader more than reading this much.
MAX_RESULT_BYTES = 64 << 20
# Once a hidden case's steps have reached a worker, the one text of every way the rest of the
# submission can be stopped (its process ended so that the import fails again, the time gone
# before a fresh copy is made, too many results):
# which way it was is a choice of the hidden case's, so the student learns nothing of it
# (SECURITY.md, "What is NOT defended", 2). Staff see the case that stopped it.
STOPPED_AFTER_HIDDEN = (
    "the remaining cases could not run: an earlier case stopped the submission (it ended its process, used "
    f"up the time, or sent the grader more than {MAX_RESULT_BYTES >> 20} MiB of results)"
)
LOOK_AHEAD = 3  # case messages that may wait in a worker's pipe behind the case it runs (run_submission)

SIGNAL_HINTS = {
    "SIGSEGV": "a segmentation fault",
    "SIGKILL": "killed (memory or process limit)",
    "SIGXCPU": "out of CPU time",
    "SIGABRT": "aborted",
    "SIGBUS": "a bus error",
}


def case_messages(cases: tuple[Case, ...]) -> tuple[bytes, ...]:
    """Each case's framed message for the worker (its id and steps, never its checks). Built once
    per grading run and shared by every submission."""
    return tuple(framing.frame(framing.case_message(case.uid, case.steps)) for case in cases)


def _import_problem(ctl: framing.ImportFailed) -> str:
    message = f": {ctl.message}" if ctl.message else ""
    return f"{ctl.where}: {ctl.type}{message} (your {active_lab().module_file} could not be imported, so no case could run)"


def run_submission(
    zygote: Zygote,
    scratch_area: ScratchArea,
    slot: int,
    submission: Path,
    cases: tuple[Case, ...],
    settings: RunSettings,
    messages: tuple[bytes, ...] | None = None,
    look_ahead: tuple[bool, ...] | None = None,
    redacted: tuple[bool, ...] | None = None,
    keep_frame_bytes: int = 0,
) -> SubmissionRun:
    """Run every case of a submission, each in its own process; never raises for the submission's faults.

    ``messages`` are :func:`case_messages` of ``cases``, when the caller grades many submissions.
    ``look_ahead[i]``: case ``i + 1``'s message may wait in the worker's pipe while case ``i``
    runs, so the worker starts it without waiting for the grader (up to :data:`LOOK_AHEAD`
    cases wait, each allowed after the one before it). The worker's output is one
    stream; each case's status frame says where the case's output ends in it (measured by the
    worker once the case's processes are gone), so a tail holds only what its case printed.
    That position is the worker's claim, so the caller still allows look-ahead only between
    cases shown alike (both visible, or both redacted). Default: never.
    ``redacted[i]``: case ``i`` is not shown to students. Once such a case's steps have reached a
    worker, nothing a later worker says at import (its message, its output) is reported: it could
    carry what the hidden case was given. Callers run such cases last (grade.run_order).
    ``keep_frame_bytes``: a case's raw observation frame is kept in its :class:`CaseRun` (for the
    observation cache) only up to this size; otherwise it goes once decoded."""
    started = time.monotonic()
    budget_end = started + settings.submission_budget_s
    try:
        scratch, code, log = scratch_area.prepare(slot, submission, budget_end)
    except SubmissionProblem as problem:
        return SubmissionRun.problem_only(str(problem), cases)
    if messages is None:
        messages = case_messages(cases)
    state = _SubmissionInProgress(zygote, scratch_area, slot, submission, settings, scratch, code, log, budget_end)
    state.keep_frame_bytes = keep_frame_bytes
    results: list[CaseRun] = []
    try:
        for index in range(len(cases)):
            results.append(state.run(cases, index, messages, look_ahead, redacted))
    finally:
        state.close()
    return SubmissionRun(state.problem, tuple(results), state.import_tail, time.monotonic() - started)


class _SubmissionInProgress:
    """One submission's run between its cases: its current worker (None until one is needed:
    after a case that left it unusable, the next case gets a fresh one), its output log, and
    what lasts from case to case (a submission-wide problem, whether a hidden case has been sent)."""

    def __init__(
        self,
        zygote: Zygote,
        scratch_area: ScratchArea,
        slot: int,
        submission: Path,
        settings: RunSettings,
        scratch: Path,
        code: Path,
        log: Path,
        budget_end: float,
    ) -> None:
        self.zygote, self.scratch_area, self.slot, self.submission = zygote, scratch_area, slot, submission
        self.settings, self.budget_end = settings, budget_end
        self.scratch, self.code, self.log = scratch, code, log
        self.uid = scratch_area.uid_for(slot)
        self.worker: Worker | None = None
        self.workers_started = 0
        self.secret_sent = False  # a redacted case's steps have reached a worker of this submission
        self.problem = ""  # once set, every remaining case is an error with these words
        self.import_tail = ""  # what the first worker printed while importing the submission
        self.tail = Tail(log, settings.tail_bytes)
        self.keep_frame_bytes = 0  # raw frames kept up to this size (see run_submission)
        self.observed_bytes = 0  # of the observation frames decoded so far (MAX_OBSERVED_BYTES)
        self.result_budget: float = MAX_RESULT_BYTES  # what its workers may still send

    def run(
        self,
        cases: tuple[Case, ...],
        index: int,
        messages: tuple[bytes, ...],
        look_ahead: tuple[bool, ...] | None,
        redacted: tuple[bool, ...] | None,
    ) -> CaseRun:
        """Case ``index``: run it in the current worker (started first if there is none), or say why not."""
        case = cases[index]
        if self.problem:
            return CaseRun.not_run(case.uid, "error", self.problem)
        if time.monotonic() >= self.budget_end:
            return _budget_used_up(case.uid, self.settings)
        if self.worker is None:
            unrun = self.start_worker(case, index)
            if unrun is not None:
                return unrun
        worker = self.worker
        deadline = min(self.budget_end, time.monotonic() + self.settings.case_timeout_s)
        if worker.sent == index:
            if not worker.send(messages[index], deadline):
                self.stop_worker()
                return CaseRun.not_run(
                    case.uid, "crashed", "the worker process was gone before the case could start", self.tail.take()
                )
            worker.sent = index + 1
        # queue the next cases (up to LOOK_AHEAD), each shown as the one before it, so that the
        # worker goes on while this thread waits for the interpreter lock (another submission
        # being judged holds it for up to a switch interval at a time)
        while (
            look_ahead is not None
            and index < worker.sent < min(index + 1 + LOOK_AHEAD, len(cases))
            and look_ahead[worker.sent - 1]
            and worker.send_ahead(messages[worker.sent])
        ):
            worker.sent += 1
        self.secret_sent = self.secret_sent or (redacted is not None and any(redacted[index : worker.sent]))
        # the case's token, issued only now that the case before it has ended: frames written
        # before this point (by an earlier case's code, say) cannot carry it, so never count for it
        token = secrets.token_hex(16)
        # (a worker already gone, or stuck with its pipe full, is told by what _run_case reads)
        worker.send(framing.frame(framing.token_message(case.uid, token)), deadline)
        run, healthy, output_end = _run_case(
            worker, case, deadline, self.settings, self.budget_end, self.keep_frame_bytes, token
        )
        self.result_budget = worker.reader.budget
        if not healthy:  # stopped before its tail is read: what it wrote is its own, none reaches the next
            late_end = worker.stop(case.uid, token)
            output_end = output_end if output_end is not None else late_end
            self.worker = None
        if self.result_budget < 0:
            self.problem = (
                STOPPED_AFTER_HIDDEN
                if self.secret_sent
                else (
                    f"the submission sent the grader more than {MAX_RESULT_BYTES >> 20} MiB of results "
                    "(padded or oversized frames), so its remaining cases were not run"
                )
            )
            self.stop_worker()
        if run.observation is not None:
            self.observed_bytes += run.held_bytes
            if self.observed_bytes > MAX_OBSERVED_BYTES:
                run = replace(
                    run,
                    status="error",
                    observation=None,
                    frame=b"",
                    message=f"the case's result was not kept: this submission's results passed {MAX_OBSERVED_BYTES >> 20} MiB "
                    "together (arrays far larger than the cases' inputs?); the case counts as failed",
                )
        return replace(run, output_tail=self.tail.take(output_end))

    def start_worker(self, case: Case, index: int) -> CaseRun | None:
        """A worker that has imported the submission, ready for case ``index``; or, when none
        could be had, ``case``'s record (and, for good, :attr:`problem`)."""
        if self.workers_started:  # a replacement starts from the submission as handed in
            try:
                self.scratch, self.code = self.scratch_area.fresh_copy(self.slot, self.submission, self.budget_end)
            except SubmissionProblem as exc:
                self.problem = STOPPED_AFTER_HIDDEN if self.secret_sent else str(exc)
                return CaseRun.not_run(case.uid, "error", self.problem)
        self.worker = worker = Worker(self.zygote, self.scratch, self.code, self.log, self.uid, self.settings)
        worker.reader.budget = self.result_budget
        self.workers_started += 1
        worker.sent = index
        import_deadline = min(self.budget_end, time.monotonic() + self.settings.import_timeout_s)
        ctl, timed_out = _first_control(worker, import_deadline)
        text = self.tail.take()
        if self.workers_started == 1:
            self.import_tail = text
        if isinstance(ctl, framing.SandboxFailed):
            self.stop_worker()
            raise SandboxFailure(f"the worker sandbox could not be set up: {ctl.message}")
        if isinstance(ctl, framing.Ready):
            return None
        self.stop_worker()
        if timed_out and import_deadline >= self.budget_end:
            return _budget_used_up(case.uid, self.settings)
        if self.secret_sent:
            self.problem = STOPPED_AFTER_HIDDEN
        elif isinstance(ctl, framing.ImportFailed):
            self.problem = _import_problem(ctl)
        elif timed_out:
            self.problem = f"importing {active_lab().module_file} took longer than {self.settings.import_timeout_s:g} s (code at module level that never finishes?)"
        else:
            self.problem = f"importing {active_lab().module_file} ended the worker process before it reported (sys.exit or os._exit at import time?)"
        return CaseRun.not_run(case.uid, "error", self.problem)

    def stop_worker(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.worker = None

    def close(self) -> None:
        try:
            self.stop_worker()
        finally:
            self.tail.close()


def _first_control(worker: Worker, deadline: float) -> tuple[framing.Control | None, bool]:
    """What a fresh worker says first, once it has imported the submission (or failed to): its
    control message, or None when it sent something else, nothing (its stream ended) or nothing
    in time; and whether the deadline passed."""
    try:
        frame = worker.reader.next(deadline)
    except TimeoutError:
        return None, True
    except framing.ProtocolError:
        return None, False
    try:
        return (framing.decode_control(frame) if frame is not None and framing.is_control(frame) else None), False
    except framing.ProtocolError:
        return None, False


def _worker_ended(exitcode: int | None, done):
    """A case ended its worker (--isolation module): the same words as for a case process."""
    if exitcode is not None and exitcode < 0:
        name = _signal_name(-exitcode)
        return done("crashed", f"the case's process died: {SIGNAL_HINTS.get(name, name)} ({name})", healthy=False)
    code = f"exit code {exitcode}" if exitcode is not None else "it ended"
    return done(
        "crashed",
        f"the case's process ended ({code}) before reporting a result (os._exit() or exit at interpreter level?)",
        healthy=False,
    )


def _run_case(
    worker: Worker,
    case: Case,
    deadline: float,
    settings: RunSettings,
    budget_end: float,
    keep_frame_bytes: int,
    token: str,
) -> tuple[CaseRun, bool, int | None]:
    """Collect one case's frames (its message and ``token`` are already in the worker's pipe);
    returns its record, whether the worker can be reused, and where the case's output ends in
    the log. The frames count only if the status frame after them carries the case's token and
    the size of exactly those frames: in either isolation mode, a frame written for this case
    before its token was issued (while an earlier case ran) makes it malformed, never its result."""
    started = time.monotonic()
    output_end = None

    def done(status, message, observation=None, healthy=True):
        kept = observation is not None and len(observation_frames[0]) <= keep_frame_bytes
        frame = bytes(observation_frames[0]) if kept else b""  # the raw frame goes once decoded, unless cached
        return (
            CaseRun(
                uid=case.uid,
                status=status,
                observation=observation,
                message=message,
                output_tail="",
                duration_s=time.monotonic() - started,
                frame=frame,
                held_bytes=framing.blob_bytes(observation_frames[0]) if observation is not None else 0,
            ),
            healthy,
            output_end,
        )

    observation_frames: list[bytes] = []
    try:
        while True:
            frame = worker.reader.next(deadline)
            if frame is None:
                if (
                    settings.isolation == "module"
                ):  # the case ran in the worker: how the worker ended is how the case did
                    worker.stop()  # it is gone: all the log holds after the last case is this case's
                    return _worker_ended(worker.exitcode, done)
                return done("crashed", "the case ended the worker process (did it kill its parent?)", healthy=False)
            if framing.is_control(frame):
                ctl = framing.decode_control(frame)
                if not isinstance(ctl, framing.CaseStatus) or ctl.case != case.uid or ctl.token != token:
                    raise framing.ProtocolError("a control frame that is not this case's status")
                if ctl.written != framing.framed_size(observation_frames):
                    raise framing.ProtocolError("frames before its status that its worker did not write for this case")
                output_end = ctl.output_end
                break
            observation_frames.append(frame)
            if len(observation_frames) > 1:
                raise observations.ProtocolError("more than one observation frame")
    except TimeoutError:
        if deadline >= budget_end:
            return done("timeout", "the submission used up its time budget during this case", healthy=False)
        return done(
            "timeout",
            f"the case did not finish within {settings.case_timeout_s:g} s (an endless loop, or a wait that never ends?)",
            healthy=False,
        )
    except framing.ProtocolError as exc:
        return done(
            "error", f"the case's process sent a malformed result ({exc}); the case counts as failed", healthy=False
        )
    if ctl.exitcode == RETIRE_EXITCODE and observation_frames:  # it ran, but its worker is spent
        try:
            observation = observations.decode_observations(observation_frames[0], case.uid, len(case.steps))
        except observations.ProtocolError as exc:
            return done(
                "error", f"the case's result could not be read ({exc}); the case counts as failed", healthy=False
            )
        return done("observed", "", observation, healthy=False)
    if ctl.signal is not None:
        name = _signal_name(ctl.signal)
        return done("crashed", f"the case's process died: {SIGNAL_HINTS.get(name, name)} ({name})")
    if not observation_frames:
        return done(
            "crashed",
            f"the case's process ended (exit code {ctl.exitcode}) before reporting a result (os._exit() or exit at interpreter level?)",
        )
    try:
        observation = observations.decode_observations(observation_frames[0], case.uid, len(case.steps))
    except observations.ProtocolError as exc:
        return done("error", f"the case's result could not be read ({exc}); the case counts as failed")
    return done("observed", "", observation)
