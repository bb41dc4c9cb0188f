"""A PID namespace per worker (root only): no process of another worker exists for it.

Every kernel interface that takes a process id (``sched_getaffinity``, ``getpriority``,
``sched_getscheduler``, ``getpgid``, ``getsid``, ``pidfd_open``, ``kill``, ``prlimit``,
``process_vm_readv``, ``kcmp``, ``ioprio_get``, ``/proc/<pid>``...) looks the id up in the
caller's PID namespace. A worker in a namespace of its own finds only its own processes there:
another worker's affinity mask or nice value is not refused, it has no number to be asked by.

The zygote cannot enter a new namespace itself (a process's own PID namespace never changes),
so for each worker it makes one for its next child only (``unshare(CLONE_NEWPID)``), forks,
and goes back to its own (``setns``). That child is the namespace's *init* (pid 1): root, it
runs no submission code; it forks the worker (pid 2), waits for it, and writes how it ended
into a pipe the zygote reads. When init ends, the kernel kills every process left in the
namespace. The zygote ends a worker by asking init (``SIGTERM``, the one signal init
handles), so the worker's own exit status comes back exactly as when the zygote was its
parent; ``SIGKILL`` to init (from the zygote's namespace) is the fall-back.

Inside, the worker mounts a ``/proc`` of its namespace over the machine's, in its private
mount namespace (:func:`grader.run.worker.mounts.private_namespaces`): the machine's
``/proc`` would name processes by numbers that mean nothing there.
"""

from __future__ import annotations

import ctypes
import os
import signal
import struct
from collections.abc import Callable

from grader.run.worker.kernel import CLONE_NEWPID, PR_SET_PDEATHSIG, in_child, libc, prctl

_STATUS = struct.Struct("i")


def own_namespace() -> int | None:
    """A descriptor of this process's PID namespace, to come back to after making each worker's
    (None: not root, or the kernel refuses a new one here; workers then share the machine's)."""
    if os.geteuid() != 0:
        return None
    try:
        fd = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None

    def probe() -> bytes:
        if libc.unshare(CLONE_NEWPID) != 0:
            return b"0"
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os._exit(0 if os.getpid() == 1 else 1)
        _, status = os.waitpid(pid, 0)
        return b"1" if os.waitstatus_to_exitcode(status) == 0 and libc.setns(fd, CLONE_NEWPID) == 0 else b"0"

    if in_child(probe) != b"1":
        os.close(fd)
        return None
    return fd


def fork_worker(
    own: int | None, run_worker: Callable[[bool], None], close_in_init: tuple[int, ...]
) -> tuple[int, int | None]:
    """Fork a worker, in a PID namespace of its own where ``own`` (from :func:`own_namespace`)
    says it can be made. ``run_worker(in_namespace)`` never returns. Returns the pid to end the
    worker by (init's, in a namespace) and the descriptor its exit status will be read from
    (None: the pid is the worker's own, reaped by the zygote as before)."""
    if own is None or libc.unshare(CLONE_NEWPID) != 0:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the worker
            run_worker(False)
        return pid, None
    status_r, status_w = os.pipe()
    pid = -1
    # Blocked until init handles it: a SIGTERM sent before then waits instead of being dropped
    # (init ignores a signal it has no handler for).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - init of the new namespace
            os.close(status_r)
            _init(run_worker, status_w, close_in_init)
    except BaseException:
        os.close(status_r)
        raise
    finally:
        if pid != 0:  # the zygote, whether the fork worked or not
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.close(status_w)
            if libc.setns(own, CLONE_NEWPID) != 0:  # the next worker would land in this one's namespace
                raise OSError(ctypes.get_errno(), "could not return to the zygote's own PID namespace")
    os.set_blocking(status_r, False)
    return pid, status_r


def _init(run_worker: Callable[[bool], None], status_w: int, close: tuple[int, ...]) -> None:  # pragma: no cover
    try:
        alive = [0]  # the worker's pid here while it has not been reaped

        def end_worker(signum: int, frame: object) -> None:
            if alive[0] > 0:
                try:
                    os.kill(alive[0], signal.SIGKILL)
                except ProcessLookupError:
                    pass

        signal.signal(signal.SIGTERM, end_worker)  # still blocked (fork_worker)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.setsid()
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        worker = os.fork()
        if worker == 0:
            os.close(status_w)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            run_worker(True)
        alive[0] = worker
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # one sent meanwhile ends it now
        for fd in close:
            try:
                os.close(fd)
            except OSError:
                pass
        while True:
            done, status = os.waitpid(-1, 0)  # the worker, and whatever re-parents here when it dies
            if done == worker:
                alive[0] = 0
                os.write(status_w, _STATUS.pack(status))
                break
    finally:
        os._exit(0)  # the kernel now kills whatever is left in the namespace


def worker_status(status_r: int) -> int | None:
    """How the worker ended (as :func:`os.waitstatus_to_exitcode` says it), read once its init
    has ended; None when init ended without saying (it was killed). Closes ``status_r``."""
    try:
        data = os.read(status_r, _STATUS.size)
    except OSError:
        data = b""
    finally:
        os.close(status_r)
    return os.waitstatus_to_exitcode(_STATUS.unpack(data)[0]) if len(data) == _STATUS.size else None
