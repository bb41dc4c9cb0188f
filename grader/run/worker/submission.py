"""The submission worker: import one submission once, then run each case in a forked child.

Lives in a process forked from the zygote, confined by :mod:`grader.run.worker.sandbox`
before the submission is imported. It talks to the grader over two pipes:

* ``cmd`` (grader -> worker): length-prefixed case messages (steps only), and each case's
  token, sent once the case before it has ended (:class:`Commands` tells them apart);
* ``res`` (worker -> grader): a ``ready`` or ``import_error`` frame once, then per
  case the child's observation frame followed by the worker's ``status`` frame
  (the child's exit code or signal, the case's token and how many bytes were relayed before it).

Each case runs in a child of its own, so no case sees another's state and a
crash, ``os._exit`` or segfault costs that case only. The child never holds the
grader's pipes: it writes its frame into a pipe of its own, which the worker
reads until the child has exited and then relays, only if it is whole
observation frames (never a control frame), so whatever a case writes can at
worst fail that case. When a child ends, every process it left behind is killed
before the next case starts.
"""

from __future__ import annotations

import importlib
import os
import select
import signal
import sys
import sysconfig
import time
import traceback
from pathlib import Path

from grader import framing, observations
from grader.lab import active as active_lab
from grader.lab import preload_pack
from grader.lab import use as use_lab
from grader.observe import locations
from grader.observe.interpreter import run_case
from grader.run.copying import module_file, module_file_name, walk_submission
from grader.run.worker import guard, importing, sandbox

# The most a case's process may write into its result pipe: one frame of the largest valid size.
MAX_CASE_OUTPUT = framing.MAX_FRAMED_BYTES
# Relayed in place of anything else a case wrote: the grader reads it as a malformed result.
NOT_A_RESULT = b"XXXX: the case's process wrote something other than one result frame"
ORPHAN_KILL_SECONDS = 2.0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class Commands:
    """What the grader sends, in order: case messages are run in turn; a case's token arrives
    once the grader has the case before it, often while the case already runs (its message may
    wait in the pipe early), so each kind is kept apart until it is needed."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.cases: list[bytes] = []
        self.tokens: dict[str, str] = {}

    def _read(self) -> bool:
        body = framing.read_frame(self.fd)
        if body is None:
            return False
        if framing.is_token(body):
            uid, token = framing.read_token(body)
            self.tokens[uid] = token
        else:
            self.cases.append(body)
        return True

    def next_case(self) -> bytes | None:
        """The next case message; None once the grader has closed the pipe."""
        while not self.cases:
            if not self._read():
                return None
        return self.cases.pop(0)

    def token(self, uid: str) -> str | None:
        """Case ``uid``'s token, waiting for it; None once the grader has closed the pipe."""
        while uid not in self.tokens:
            if not self._read():
                return None
        return self.tokens.pop(uid)


def status_frames(commands: Commands, uid: str, written: bytes, **status) -> bytes | None:
    """What the worker writes once case ``uid`` has ended: the frames ``written`` for it, then its
    status frame with its token and their size; None when the grader has gone."""
    token = commands.token(uid)
    if token is None:
        return None
    return written + framing.control_frame(framing.CaseStatus(case=uid, token=token, written=len(written), **status))


def submission_module(root: Path) -> tuple[str, tuple[str, ...]]:
    """The name to import the submission's module file (the lab's student module) by, and the
    folders to put first on ``sys.path``. At the top: the module's name from ``root``. Deeper
    (a handout's ``pkg/module.py``): as a module of its folders' package, ``pkg.module``, so
    that its relative imports work, with its own folder on the path too, so that its imports of
    sibling modules by their bare names work as well; under a folder whose name is not a Python
    name (``lab 3/``), as the bare module name from that folder."""
    module_name = active_lab().module
    if (root / module_file_name()).is_file():
        return module_name, (str(root),)
    rel = module_file(walk_submission(root)[1], root.name)  # the copy already checked there is one
    folder_parts = Path(rel).parent.parts
    folder = str(root.joinpath(*folder_parts))
    if all(part.isidentifier() for part in folder_parts):
        return ".".join((*folder_parts, module_name)), (str(root), folder)
    return module_name, (folder, str(root))


def _import_error_where(exc: BaseException, root: Path, name: str) -> str:
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{_relative(exc.filename, root)}:{exc.lineno or 0}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _inside(f.filename, root)]
    if frames:
        return f"{_relative(frames[-1].filename, root)}:{frames[-1].lineno}"
    return f"{name.replace('.', '/')}.py"


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


def import_submission(root: Path, extra_paths: tuple[str, ...] = (), before_import=None, module=None):
    """Import the lab's student module from the submission's directory, and nothing of the grader's solution.
    ``before_import`` runs once the import path is set, just before the import; ``module`` is
    :func:`submission_module`'s answer for ``root`` (worked out here when not given)."""
    name, first = module if module is not None else submission_module(root)
    # Only the submission and the standard library are on the path: the grader's
    # own packages (its reference solution above all) are not importable from here.
    stdlib = {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")}
    python_entries = [p for p in sys.path if p in stdlib or p.endswith((".zip", "lib-dynload"))]
    sys.path[:] = [*first, *python_entries, *extra_paths]
    # .py source only from the submission's folder and any folder its code adds: no zip, .pyc or .so
    importing.source_only_hooks((*stdlib, *python_entries, *extra_paths, *_grader_and_numpy()))
    if not extra_paths:
        for name in [n for n in sys.modules if n == "reference" or n.startswith("reference.")]:
            del sys.modules[name]
    sys.modules.pop(name, None)
    if before_import is not None:
        before_import()
    return importlib.import_module(name)


def _grader_and_numpy() -> tuple[str, ...]:
    """The folders of the grader package and of numpy (both imported before any submission)."""
    import numpy

    import grader

    return os.path.dirname(grader.__file__), os.path.dirname(numpy.__file__)


def _reap_now() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_orphans(signal_all: bool = False, tree_only: bool = False) -> None:
    """End every process the last case left behind.

    ``signal_all``: this sandbox's processes are the only ones ``kill(-1)`` reaches (a uid of its
    own, or Landlock's signal scope), so one call ends them all, wherever they re-parented.
    Then, as a child subreaper, kill and reap whatever re-parented here, until nothing is left
    (a process killed while forking may leave a child that re-parents a moment later).

    ``tree_only``: every process of this sandbox descends from this one (the seccomp filter
    refuses CLONE_PARENT, the one way to start a process outside one's own tree, and orphans
    re-parent to this subreaper). Then a single-threaded process with no child has nothing left
    to end, and ``kill(-1)``, which visits every process on the machine (the larger part of
    what running a case costs here), is skipped."""
    if tree_only and not sandbox.children() and _single_threaded():
        return
    end = time.monotonic() + ORPHAN_KILL_SECONDS
    while True:
        if signal_all:
            try:
                os.kill(-1, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        children = sandbox.children()
        if not children or time.monotonic() > end:
            break
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)  # it is dead (SIGKILL); wait until its children have re-parented
            except ChildProcessError:
                pass
    _reap_now()


def _single_threaded() -> bool:
    """No thread but this one (a thread could start a process after the check)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _wait_collecting(pid: int, fd: int) -> tuple[bytes, int]:
    """Wait for the case's process to exit while reading its result pipe (closed on return);
    returns what it wrote (at most MAX_CASE_OUTPUT + 1 bytes) and its wait status. Data written
    by processes it left behind after it exited is not waited for."""
    os.set_blocking(fd, False)
    try:
        exit_fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        exit_fd = None
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    if exit_fd is not None:
        poller.register(exit_fd, select.POLLIN)
    chunks: list[bytes] = []
    size = 0
    open_pipe = True
    status = None
    try:
        while status is None:
            poller.poll(10 if exit_fd is None else -1)
            while open_pipe and size <= MAX_CASE_OUTPUT:
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    break
                if not chunk:
                    open_pipe = False
                    poller.unregister(fd)
                    break
                chunks.append(chunk)
                size += len(chunk)
            if open_pipe and size > MAX_CASE_OUTPUT:  # stop listening; its writes now fail (EPIPE)
                open_pipe = False
                poller.unregister(fd)
                os.close(fd)
                fd = -1
            done, status_now = os.waitpid(pid, os.WNOHANG)
            if done:
                status = status_now
        while open_pipe and size <= MAX_CASE_OUTPUT:  # what it wrote before it exited
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        for owned in (fd, exit_fd):
            if owned is not None and owned >= 0:
                os.close(owned)
    return b"".join(chunks), status


def relayable(data: bytes) -> bytes:
    """What to pass on to the grader of what a case's process wrote: its observation frames as
    they are (the grader validates them), nothing when it wrote nothing, and a deliberately
    malformed frame for anything else (a partial frame, trailing bytes, too much, or a control
    frame that would speak for the worker)."""
    if not data:
        return b""
    if len(data) <= MAX_CASE_OUTPUT:
        rest = data
        try:
            while rest:
                frame, rest = framing.split_frame(rest)
                if frame is None or framing.is_control(frame):
                    break
            else:
                return data
        except framing.ProtocolError:
            pass
    return framing.frame(NOT_A_RESULT)


def _run_one_case(
    module, message: bytes, res_fd: int, commands: Commands, signal_all: bool, tree_only: bool = False
) -> bool:
    uid, steps = framing.read_case_message(message)
    sys.stdout.flush()
    sys.stderr.flush()
    result_r, result_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the case's own process: it keeps stdio and its result pipe, nothing else
        code = 0
        try:
            sandbox.die_with_parent()  # a case never outlives its worker
            os.close(result_r)
            for fd in (commands.fd, res_fd):
                os.close(fd)
            _write_all(result_w, guard.checked(run_case(module, uid, steps), uid, steps)[0])
        except BaseException:  # noqa: BLE001 - whatever happens, this process ends here
            traceback.print_exc()
            code = 70
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(result_w)
    data, status = _wait_collecting(pid, result_r)
    kill_orphans(signal_all, tree_only)
    exitcode = os.waitstatus_to_exitcode(status)
    out = status_frames(
        commands,
        uid,
        relayable(data),
        exitcode=exitcode if exitcode >= 0 else None,
        signal=-exitcode if exitcode < 0 else None,
        output_end=_output_end(),
    )
    if out is None:
        return False
    _write_all(res_fd, out)
    return True


def _output_end() -> int:
    """The output log's size now that the case's processes (and those they left) are gone: all
    this case printed lies before it, and nothing of the next case (which may already wait in the
    command pipe) can, so the grader cuts the case's tail exactly here."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        return os.fstat(1).st_size
    except OSError:
        return 0


def serve(
    plan: sandbox.SandboxPlan,
    submission_root: str,
    cmd_fd: int,
    res_fd: int,
    out_fd: int,
    isolation: str = "process",
    lab: str | None = None,
) -> None:
    """Entry point of a freshly forked worker. Never returns. ``isolation``: "process" runs each
    case in a forked child; "module" runs each in this process against a freshly executed
    submission (see :mod:`grader.run.worker.inprocess`). ``lab``: the folder of the lab graded
    (its lab.yaml), activated and its pack's code imported before the sandbox is entered."""
    try:
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        try:
            if lab is not None:
                preload_pack(use_lab(lab))  # the zygote's lab, kept as it is, when it is this one
            applied = sandbox.enter(plan, keep_fds=(cmd_fd, res_fd))
        except BaseException as exc:  # noqa: BLE001 - the machine's problem: tell the grader, run nothing
            _write_all(
                res_fd,
                framing.control_frame(
                    framing.SandboxFailed(message=observations.shorten(f"{type(exc).__name__}: {exc}"))
                ),
            )
            os._exit(0)
        sandbox.set_child_subreaper()
        guard.host_only()  # before any submission code: no array is a device array by its name
        sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
        sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
        root = Path(submission_root)
        fresh = None
        if isolation == "module":
            from grader.run.worker import inprocess

            def before_import() -> None:
                nonlocal fresh
                fresh = inprocess.FreshSubmission((str(root), *plan.import_paths), module_name)

        import_started = (time.monotonic(), time.process_time())
        module_name = active_lab().module
        locations.SUBMISSION_TOP = str(root)  # lines are named from the submission's top (mini_vllm/...)
        try:
            found = submission_module(root)
            module_name = found[0]
            module = import_submission(
                root, plan.import_paths, before_import if isolation == "module" else None, module=found
            )
        except BaseException as exc:  # noqa: BLE001 - a broken submission is a verdict, not a crash
            # A SyntaxError's str() repeats the file and line that `where` already gives.
            message = exc.msg if isinstance(exc, SyntaxError) and exc.msg else str(exc)
            _write_all(
                res_fd,
                framing.control_frame(
                    framing.ImportFailed(
                        type=type(exc).__name__,
                        message=observations.shorten(message),
                        where=_import_error_where(exc, root, module_name),
                    )
                ),
            )
            os._exit(0)
        _write_all(res_fd, framing.control_frame(framing.Ready()))
        # kill(-1) may be used only where it reaches this sandbox's processes alone
        signal_all = "uid" in applied or bool(applied.get("signal_scope"))
        tree_only = bool(applied.get("socket_filter"))  # CLONE_PARENT refused: see kill_orphans
        if fresh is not None and inprocess.import_too_slow(*import_started):
            fresh = None  # module-level code this slow would run again before every case: fork per case instead
        if fresh is not None:
            fresh.fds = inprocess.open_fds()
            fresh.ceiling = inprocess.memory.Ceiling.after_import()
            fresh.spec = getattr(module, "__spec__", None)
            fresh.first, module = module, None  # held for its first case only, then dropped as any case's
        commands = Commands(cmd_fd)
        while True:
            message = commands.next_case()
            if message is None:
                break
            if fresh is None:
                if not _run_one_case(module, message, res_fd, commands, signal_all, tree_only):
                    break
            elif not inprocess.run_case_here(
                fresh,
                module,
                message,
                res_fd,
                _write_all,
                lambda: kill_orphans(signal_all, tree_only),
                _output_end,
                lambda uid, written, **status: status_frames(commands, uid, written, **status),
            ):
                break  # retired (or the grader has gone): the grader starts a fresh worker for the next case
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        os._exit(0)
