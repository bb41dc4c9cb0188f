"""Write each submission's reports in processes of their own, beside the grading.

Rendering a submission's files (report.json, report.html, staff.html, results.json, junit.xml)
is pure Python, as judging is: in one process the two take turns on one interpreter lock, the
grader's process becomes the busiest of the run, and the workers it feeds wait for it. So
``grade`` forks writers before its threads start (everything they need, the templates
included, is loaded by then). A writer runs no submission code: it takes a finished
:class:`~grader.judging.results.Report` over a pipe, writes its files, and answers with nothing
or with the error it met, which the grader turns into that submission's problem as before.

A writer may also be asked to *judge* (:meth:`ReportWriters.judge`): ``grade`` hands it a
submission the observation cache holds whole, and the writer reads that submission's cache
file, decodes each case's frame with the same bounded decoder the grader uses
(:func:`grader.observations.decode_observations`: frames a worker once sent, which the grader
decoded and kept), judges, writes, and answers with the report. It holds the grader's own
privileges, as a forked copy of it, and nothing more; whatever fails there, the grader judges
that submission itself.

A writer that cannot be reached (it died, or its pipe broke) is not replaced: that
submission's files, and every later one's it would have written, are written in the grader's
own process instead, as they always were. So is every report when no writer could be forked,
or when the process already runs other threads (a fork copies only the calling thread, and a
lock another thread held would stay locked in the copy).
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection, Pipe
from pathlib import Path
from typing import Any

from grader.judging.results import Report

WriteOutputs = Callable[..., None]  # (report, its folder, hidden cases' visibility, judged=...)


class WriteFailed(Exception):
    """The writer's write raised: its type's name and message, as the grader reports them."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name


class ReportWriters:
    """Up to ``count`` forked writer processes; :meth:`write` may be called from many threads
    at once. Make it while this process has no other thread; :meth:`close` it when done."""

    def __init__(self, count: int, write_outputs: WriteOutputs, judge: Callable[..., Any] | None = None) -> None:
        self.write_outputs = write_outputs
        self.judge_here = judge  # see judge()
        self.cpu_s = 0.0  # user + system time of the writers, known after close()
        # one token per writer: (its pid, this process's end of its pipe); (0, None) once it is gone
        self._tokens: queue.Queue[tuple[int, Connection | None]] = queue.Queue()
        self._local = threading.Lock()  # writing in this process: one submission at a time
        self.forked = 0
        if threading.active_count() > 1 or not hasattr(os, "fork"):
            count = 0  # see the module's docstring; and a system without fork writes here
        ends: list[Connection] = []
        for _ in range(count):
            try:
                ours, theirs = Pipe()
            except OSError:  # no descriptor to spare: the rest is written here
                break
            try:
                pid = os.fork()
            except OSError:  # no process to spare: the rest is written here
                ours.close()
                theirs.close()
                break
            if pid == 0:  # pragma: no cover - the writer process
                # it keeps no end of another writer's pipe, or that writer would never read its end
                for end in (*ends, ours):
                    end.close()
                self._serve(theirs)
            theirs.close()
            ends.append(ours)
            self._tokens.put((pid, ours))
            self.forked += 1

    def _serve(self, conn: Connection) -> None:
        """The writer's loop; never returns. It ends with os._exit: no atexit handler, no flush of
        a buffer it inherited from the grader."""
        code = 0
        try:
            while True:
                try:
                    kind, args = conn.recv()
                except EOFError:
                    break
                try:
                    if kind == "judge" and self.judge_here is not None:
                        answer = ("ok", self.judge_here(*args))
                    else:
                        report, out_dir, hidden_visibility, judged = args
                        self.write_outputs(report, out_dir, hidden_visibility, judged=judged)
                        answer = ("ok", None)
                except Exception as exc:  # noqa: BLE001 - the grader makes it the submission's problem
                    answer = ("error", type(exc).__name__, str(exc))
                try:
                    payload = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
                except Exception as exc:  # noqa: BLE001 - an answer that cannot be sent says so
                    payload = pickle.dumps(("error", type(exc).__name__, str(exc)), pickle.HIGHEST_PROTOCOL)
                conn.send_bytes(payload)
        except BaseException:  # noqa: BLE001 - Ctrl-C, a broken pipe: the grader writes the rest
            code = 1
        finally:
            os._exit(code)

    def write(self, report: Report, out_dir: Path, hidden_visibility: str, judged: dict | None = None) -> None:
        """Write one submission's files; raises what the write raised (as :class:`WriteFailed`
        when a writer met it). ``judged``: what the report was judged from, for its manifest."""
        args = (report, out_dir, hidden_visibility, judged)
        answer = self._ask("write", args) if self.forked else None
        if answer is None:  # no writer to ask
            self._write_here(*args)
        elif answer[0] != "ok":
            raise WriteFailed(*answer[1:])

    def judge(self, *args: Any) -> tuple[Any, WriteFailed | None] | None:
        """What the ``judge`` given at start returns for ``args``, computed in a writer process,
        so that judging, like writing, spreads over the machine's cores: (its value, None), or
        (None, the failure it raised). None when there is no writer to ask (the caller does the
        work in this process, as it always did)."""
        if not self.forked or self.judge_here is None:
            return None
        answer = self._ask("judge", args)
        if answer is None:
            return None
        if answer[0] == "ok":
            return answer[1], None
        return None, WriteFailed(*answer[1:])

    def _ask(self, kind: str, args: tuple) -> tuple | None:
        """A writer's answer to one request; None when no writer could be asked (all gone, or
        the request cannot be sent)."""
        pid, conn = self._tokens.get()
        try:
            if conn is None:
                return None
            try:
                payload = pickle.dumps((kind, args), pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - cannot be sent (it never is, but a report is data)
                return None
            try:
                conn.send_bytes(payload)
                answer = pickle.loads(conn.recv_bytes())
            except (OSError, EOFError, pickle.UnpicklingError):  # the writer is gone
                self._end(pid, conn, kill=True)
                pid, conn = 0, None
                return None
            if not isinstance(answer, tuple) or not answer or answer[0] not in ("ok", "error"):
                self._end(pid, conn, kill=True)  # not a writer's answer: that writer is done
                pid, conn = 0, None
                return None
            return answer
        finally:
            self._tokens.put((pid, conn))

    def _write_here(self, report: Report, out_dir: Path, hidden_visibility: str, judged: dict | None) -> None:
        with self._local:
            self.write_outputs(report, out_dir, hidden_visibility, judged=judged)

    def _end(self, pid: int, conn: Connection, kill: bool) -> None:
        conn.close()  # a writer waiting for the next report reads the end of its pipe, and exits
        if kill:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            _, _, usage = os.wait4(pid, 0)
        except ChildProcessError:
            return
        self.cpu_s += usage.ru_utime + usage.ru_stime

    def close(self) -> None:
        """End every writer and wait for it; called once no write is in progress (grade's
        threads have all returned, a stopped run's included)."""
        while True:
            try:
                pid, conn = self._tokens.get_nowait()
            except queue.Empty:
                break
            if conn is not None:
                self._end(pid, conn, kill=False)
        self.forked = 0


def writer_count(jobs: int, submissions: int) -> int:
    """One writer per worker slot; none for a single submission (nothing to overlap with)."""
    return 0 if submissions < 2 else max(1, jobs)
