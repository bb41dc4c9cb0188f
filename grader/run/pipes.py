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

from grader import codec
from grader.safetext import safe_text

if TYPE_CHECKING:
    from grader.run.runner import RunSettings
    from grader.run.zygote_client import Zygote


class Reader:
    """Frames off a non-blocking pipe: read what is there, wait (poll) only when nothing is.

    Linear in the bytes read, however they are trickled: what arrives is appended to one
    ``bytearray`` and whole frames are taken off its front (:func:`grader.codec.take_frame`);
    a frame's length is checked against its bound as soon as its prefix is in."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()
        os.set_blocking(fd, False)
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)

    def next(self, deadline: float) -> bytes | None:
        """The next frame; None at end of stream; TimeoutError past the deadline."""
        while True:
            frame = codec.take_frame(self.buf)
            if frame is not None:
                return frame
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.poller.poll(max(1, math.ceil(remaining * 1000))):
                    raise TimeoutError from None
                continue
            if not chunk:
                return None
            self.buf += chunk


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
        data = bytes(self.reader.buf)
        while len(data) <= 2 * codec.MAX_FRAME_BYTES:
            try:
                chunk = os.read(self.res_r, 1 << 20)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        try:
            while True:
                frame, data = codec.split_frame(data)
                if frame is None:
                    return None
                if codec.is_control(frame):
                    ctl = codec.decode_control(frame)
                    if isinstance(ctl, codec.CaseStatus) and ctl.case == case_uid and ctl.token == token:
                        return ctl.output_end
        except codec.ProtocolError:
            return None
