"""The submission worker: import one submission once, then run each case in a forked child.

Lives in a process forked from the zygote, confined by :mod:`grader.worker.sandbox`
before the submission is imported. It talks to the grader over two pipes:

* ``cmd`` (grader -> worker): length-prefixed case messages (steps only);
* ``res`` (worker -> grader): a ``ready`` or ``import_error`` frame once, then per
  case the child's observation frame followed by the worker's ``status`` frame
  (the child's exit code or signal).

Each case runs in a child of its own, so no case sees another's state and a
crash, ``os._exit`` or segfault costs that case only. When a child ends, every
process it left behind is killed before the next case starts.
"""

from __future__ import annotations

import importlib
import os
import signal
import struct
import sys
import sysconfig
import traceback
from pathlib import Path

from grader import protocol
from grader.interpreter import run_case
from grader.worker import sandbox

MODULE_NAME = "cudagraph"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int) -> bytes | None:
    header = _read_exact(fd, 8)
    if header is None:
        return None
    (length,) = struct.unpack("<Q", header)
    return _read_exact(fd, length)


def _import_error_where(exc: BaseException, root: Path) -> str:
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{_relative(exc.filename, root)}:{exc.lineno or 0}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _inside(f.filename, root)]
    if frames:
        return f"{_relative(frames[-1].filename, root)}:{frames[-1].lineno}"
    return f"{MODULE_NAME}.py"


def _inside(path: str, root: Path) -> bool:
    try:
        Path(path).resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError):
        return False


def _relative(path: str, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except (ValueError, OSError):
        return Path(path).name


def import_submission(root: Path, extra_paths: tuple[str, ...] = ()):
    """Import ``cudagraph`` from the submission's directory, and nothing of the grader's solution."""
    # Only the submission and the standard library are on the path: the grader's
    # own packages (its reference solution above all) are not importable from here.
    stdlib = {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")}
    sys.path[:] = [str(root)] + [p for p in sys.path if p in stdlib or p.endswith((".zip", "lib-dynload"))] + list(extra_paths)
    if not extra_paths:
        for name in [n for n in sys.modules if n == "reference" or n.startswith("reference.")]:
            del sys.modules[name]
    sys.modules.pop(MODULE_NAME, None)
    return importlib.import_module(MODULE_NAME)


def kill_orphans() -> None:
    """End every process that re-parented to this one (we are a child subreaper)."""
    me = os.getpid()
    for _ in range(50):
        try:
            children = Path(f"/proc/{me}/task/{me}/children").read_text().split()
        except OSError:
            children = []
        if not children:
            break
        for pid in children:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break


def _run_one_case(module, message: bytes, res_fd: int, cmd_fd: int, own_uid: bool) -> None:
    uid, steps = protocol.read_case_message(message)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the case's own process
        code = 0
        try:
            os.close(cmd_fd)
            _write_all(res_fd, run_case(module, uid, steps))
        except BaseException:  # noqa: BLE001 - whatever happens, this process ends here
            traceback.print_exc()
            code = 70
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    _, status = os.waitpid(pid, 0)
    if own_uid:
        try:  # every other process of this sandbox uid: the case's escaped descendants
            os.kill(-1, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    kill_orphans()
    exitcode = os.waitstatus_to_exitcode(status)
    _write_all(
        res_fd,
        protocol.control_frame("status", case=uid, exitcode=exitcode if exitcode >= 0 else None, signal=-exitcode if exitcode < 0 else None),
    )


def serve(plan: sandbox.SandboxPlan, submission_root: str, cmd_fd: int, res_fd: int, out_fd: int) -> None:
    """Entry point of a freshly forked worker. Never returns."""
    try:
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        applied = sandbox.enter(plan, keep_fds=(cmd_fd, res_fd))
        sandbox.set_child_subreaper()
        sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
        sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
        root = Path(submission_root)
        try:
            module = import_submission(root, plan.import_paths)
        except BaseException as exc:  # noqa: BLE001 - a broken submission is a verdict, not a crash
            _write_all(res_fd, protocol.control_frame("import_error", type=type(exc).__name__, message=protocol._short(str(exc)), where=_import_error_where(exc, root)))
            os._exit(0)
        _write_all(res_fd, protocol.control_frame("ready"))
        own_uid = "uid" in applied
        while True:
            message = read_message(cmd_fd)
            if message is None:
                break
            _run_one_case(module, message, res_fd, cmd_fd, own_uid)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        os._exit(0)
