"""One worker as the grader holds it: its pipes, read and written against deadlines, never
blocking (:class:`Worker`), the frames off its result pipe (:class:`Reader`) and what its
processes printed (:class:`Tail`)."""

from __future__ import annotations

import math
import os
import select
import time
from pathlib import Path
from typing import TYPE_CHECKING

from grader import framing
from grader.lab import active as active_lab
from grader.safetext import safe_text

if TYPE_CHECKING:
    from grader.run.runner import RunSettings
    from grader.run.zygote_client import Zygote


class Reader:
    """Frames off a non-blocking pipe: read what is there, wait (poll) only when nothing is.

    Linear in the bytes read, however they are trickled, with one copy of each (the kernel's):
    once a frame's length prefix is in (and within its bound), its body is read straight into a
    buffer of exactly its size, so no growing buffer is copied again and no read allocates more
    than it gets. What is returned is that buffer (a ``bytearray``)."""

    PREFIX_READ = 1 << 16  # what one read takes while no frame's body is being filled
    TRICKLE_BYTES = 16 << 10  # a piece of a frame smaller than this: its writer trickles
    TRICKLE_PAUSE_S = 0.004

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.head = bytearray()  # bytes read that no frame's body has taken yet
        self.body: bytearray | None = None  # the frame being filled
        self.filled = 0
        self.budget = math.inf  # bytes it may still read (the submission's, see runner.MAX_RESULT_BYTES)
        os.set_blocking(fd, False)
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)

    def _from_head(self) -> bytearray | None:
        """Start (or go on with) a frame from what is already read; the whole frame once it is in."""
        if self.body is None:
            if len(self.head) < framing.PREFIX_BYTES:
                return None
            length = framing.frame_length(self.head)  # ProtocolError over the bound
            self.body, self.filled = bytearray(length), 0
            del self.head[: framing.PREFIX_BYTES]
        if self.head and self.filled < len(self.body):
            take = min(len(self.head), len(self.body) - self.filled)
            self.body[self.filled : self.filled + take] = memoryview(self.head)[:take]
            del self.head[:take]
            self.filled += take
        if self.filled == len(self.body):
            body, self.body = self.body, None
            return body
        return None

    def next(self, deadline: float) -> bytearray | None:
        """The next frame's body; None at end of stream; TimeoutError past the deadline."""
        while True:
            frame = self._from_head()
            if frame is not None:
                return frame
            try:
                if self.body is not None:  # straight into the frame, no more than it lacks
                    got = os.readv(self.fd, [memoryview(self.body)[self.filled :]])
                    if not got:
                        return None
                    self.filled += got
                    self._spend(got)
                    if got < self.TRICKLE_BYTES and self.filled < len(self.body):
                        # a frame arriving in small pieces is waited for, not woken for piece by
                        # piece: at most one wake-up per pause, whatever the writer does
                        time.sleep(self.TRICKLE_PAUSE_S)
                    continue
                chunk = os.read(self.fd, self.PREFIX_READ)
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.poller.poll(max(1, math.ceil(remaining * 1000))):
                    raise TimeoutError from None
                continue
            if not chunk:
                return None
            self._spend(len(chunk))
            self.head += chunk

    def _spend(self, n: int) -> None:
        self.budget -= n
        if self.budget < 0:
            raise framing.ProtocolError("more results than a submission may send")


class Tail:
    """What the worker's processes wrote to their shared log since the last look. One fstat per
    case; the file is read only when it grew (most cases print nothing)."""

    def __init__(self, log: Path, limit: int) -> None:
        self.fd = os.open(log, os.O_RDONLY)
        self.pos = 0
        self.limit = limit

    def take(self, until: int | None = None) -> str:
        """What was written since the last look, up to ``until`` (the log's size when the case
        ended, as its worker saw it) when given: what lies beyond is a later case's."""
        try:
            end = os.fstat(self.fd).st_size
            if until is not None:
                end = min(end, until)
            if end <= self.pos:
                return ""
            offset = max(self.pos, end - self.limit)
            data = os.pread(self.fd, end - offset, offset)  # never past ``end``: what follows is a later case's
        except OSError:
            return ""
        start, self.pos = self.pos, end
        return _clean_tail(data, end - start, self.limit)

    def close(self) -> None:
        os.close(self.fd)


def _clean_tail(data: bytes, written: int, limit: int) -> str:
    """What a submission printed enters the grader here, made safe (grader.safetext)."""
    text = safe_text(data.decode("utf-8", errors="replace"))
    if written > limit:
        text = f"[… {written - limit} earlier bytes cut …]\n" + text
    return text


# ---------------------------------------------------------------- one worker
class Worker:
    def __init__(
        self, zygote: Zygote, scratch: Path, code: Path, log: Path, uid: int | None, settings: RunSettings
    ) -> None:
        self.zygote, self.uid = zygote, uid
        request = {
            "submission_root": str(code),
            "scratch": str(scratch),
            "uid": uid,
            "limits": settings.limits.__dict__,
            "landlock": settings.landlock,
            "import_paths": list(settings.import_paths),
            "isolation": settings.isolation,
            "lab": str(active_lab().root),  # the worker grades this lab (grader.lab)
        }
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()
        out_w = os.open(log, os.O_WRONLY | os.O_APPEND)
        try:
            self.pid = zygote.spawn(request, (cmd_r, res_w, out_w))
        except BaseException:
            for fd in (self.cmd_w, self.res_r):
                os.close(fd)
            raise
        finally:
            for fd in (cmd_r, res_w, out_w):
                os.close(fd)
        os.set_blocking(self.cmd_w, False)  # a worker that stops reading costs a deadline, never a hang
        self.writable = select.poll()
        self.writable.register(self.cmd_w, select.POLLOUT)
        self.reader = Reader(self.res_r)
        self.alive = True
        self.exitcode: int | None = None  # how the worker ended, once stopped (negative: a signal)
        self.sent = 0  # index (into the submission's cases) of the next message not yet written

    def send(self, message: bytes, deadline: float) -> bool:
        """Write one framed message, waiting for room until ``deadline``; False if the worker is gone or stuck."""
        view = memoryview(message)
        try:
            while view:
                try:
                    view = view[os.write(self.cmd_w, view) :]
                except BlockingIOError:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or not self.writable.poll(max(1, math.ceil(remaining * 1000))):
                        return False
            return True
        except OSError:  # BrokenPipeError: the worker ended
            return False

    def send_ahead(self, message: bytes) -> bool:
        """Queue the next case's message while this one runs, so the worker starts it without
        waiting for the grader. Only whole messages that fit the pipe atomically (<= PIPE_BUF);
        anything else is sent in turn."""
        if len(message) > select.PIPE_BUF:
            return False
        try:
            return os.write(self.cmd_w, message) == len(message)
        except OSError:  # BlockingIOError, BrokenPipeError
            return False

    def stop(self, case_uid: str | None = None, token: str = "") -> int | None:
        """End the worker and everything it started. With ``case_uid`` (a case it did not finish
        in time): where that case's output ends in the log, if the worker said so before it was
        killed (it may have finished the case, and started the next, just past the deadline);
        None when it never did, and then the whole rest of the log is that case's."""
        if not self.alive:
            return None
        self.alive = False
        try:
            os.close(self.cmd_w)
        except OSError:
            pass
        self.exitcode = self.zygote.kill(self.pid, self.uid)  # nothing of this worker runs after this line
        output_end = None
        try:
            if case_uid is not None:
                output_end = self._late_status(case_uid, token)
        finally:
            try:
                os.close(self.res_r)
            except OSError:
                pass
        return output_end

    def _late_status(self, case_uid: str, token: str) -> int | None:
        """Where the case's output ends, from a status frame already in the pipe (the worker is
        gone: nothing more comes); None when there is none. Reads at most two frames' worth."""
        taken = 0
        try:
            while taken <= 2 * framing.MAX_FRAMED_BYTES:
                frame = self.reader.next(0.0)  # what is there, never waiting
                if frame is None:
                    return None
                taken += framing.PREFIX_BYTES + len(frame)
                if framing.is_control(frame):
                    ctl = framing.decode_control(frame)
                    if isinstance(ctl, framing.CaseStatus) and ctl.case == case_uid and ctl.token == token:
                        return ctl.output_end
        except (framing.ProtocolError, TimeoutError, OSError):
            return None
        return None
