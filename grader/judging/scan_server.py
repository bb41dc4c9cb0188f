"""The integrity scan's own process: ``python -I -S -m grader.judging.scan_server`` (started by
:mod:`grader.judging.integrity`, once per grading run) imports the scan once, then forks one child
per request, which sets its CPU-time and address-space limits and scans one submission.

Requests are lines of JSON on stdin: ``{"id": n, "path": ..., "cpu_s": ..., "memory": ...}`` to scan,
``{"kill": n}`` to end a scan that ran past its time. Answers are lines of JSON on stdout, written by
this process alone (so two answers never mix): ``{"id": n, "status": exit status or -signal,
"flags": [[rule, file, line, message], ...]}``. On end of input (the grader closed its end, or
died) every child is killed and this process ends. A child's answer is read within
``MAX_ANSWER_BYTES``; it holds nothing the submission wrote but the flags' text, made printable.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import select
import signal
import sys

from grader.judging.scan_files import preload, scan_submission

OUT_OF_MEMORY = 3  # a child's exit status when it ran out of memory
MAX_ANSWER_BYTES = 1 << 20


def _libc():
    """The C library, loaded once in the server (a child forked from it finds it loaded)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _die_with_parent(libc) -> None:
    """A child dies with the server (PR_SET_PDEATHSIG), should the server be killed."""
    if libc is not None:
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _child(write_fd: int, path: str, cpu_s: int, memory: int, libc) -> None:
    """In the forked child: bounded, scan, answer, end. Never returns."""
    code = 0
    try:
        _die_with_parent(libc)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        data = json.dumps([list(flag) for flag in scan_submission(path)]).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]
    except MemoryError:
        code = OUT_OF_MEMORY
    except BaseException:  # noqa: BLE001 - any other failure: a status the grader reports
        code = 1
    os._exit(code)


def serve(stdin: int = 0, stdout: int = 1) -> None:
    children: dict[int, list] = {}  # read fd -> [id, pid, bytes read]
    pending = b""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # What every child needs, loaded once here rather than in each child after its fork; the
    # collector then leaves what exists alone, so a child's first collection copies no page of it.
    libc = _libc()
    preload()
    gc.collect()
    gc.freeze()

    def answer(message: dict) -> None:
        data = (json.dumps(message) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(stdout, view) :]

    while True:
        ready, _, _ = select.select([stdin, *children], [], [])
        if stdin in ready:
            chunk = os.read(stdin, 1 << 16)
            if not chunk:
                for _, pid, _ in children.values():
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                if "kill" in request:
                    for _, (ident, pid, _) in children.items():
                        if ident == request["kill"]:
                            os.kill(pid, signal.SIGKILL)
                    continue
                read_fd, write_fd = os.pipe()
                pid = os.fork()
                if pid == 0:
                    os.close(read_fd)
                    os.close(stdin)
                    os.close(stdout)
                    _child(write_fd, request["path"], int(request["cpu_s"]), int(request["memory"]), libc)
                os.close(write_fd)
                children[read_fd] = [request["id"], pid, b""]
        for fd in [fd for fd in ready if fd in children]:
            ident, pid, got = children[fd]
            data = os.read(fd, 1 << 16)
            if data and len(got) <= MAX_ANSWER_BYTES:
                children[fd][2] = got + data
                continue
            if data:  # past the bound: the child is ended, its answer dropped
                os.kill(pid, signal.SIGKILL)
                got = b""
            os.close(fd)
            del children[fd]
            _, status = os.waitpid(pid, 0)
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            try:
                flags = json.loads(got) if code == 0 else []
            except ValueError:
                flags, code = [], 1
            answer({"id": ident, "status": code, "flags": flags})


if __name__ == "__main__":
    serve()
    sys.exit(0)
