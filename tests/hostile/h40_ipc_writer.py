"""Hostile: tries to pass what it sees to other submissions through System V IPC. At import and
in every fusion case it writes a secret into a shared memory segment, a message queue and a
semaphore, all with well-known keys and mode 0666 (h41_ipc_reader looks for them, in the same
batch and in a later run); at import it also fills and detaches four 64 MiB segments it never
removes (memory that would outlive the run).

Must get: it earns its own points honestly; nothing it wrote reaches another submission; after
the run no IPC object of it is left (each worker has an IPC namespace of its own, and a sandbox
uid's objects are removed when it is leased and released)."""
import ctypes

import _honest_core
from _honest_core import *  # noqa: F401,F403

SECRET = b"IPC-SECRET-5d1e from h40_ipc_writer"
KEY, BIG_KEYS = 0x47474701, (0x47474710, 0x47474711, 0x47474712, 0x47474713)
IPC_CREAT, IPC_NOWAIT, SETVAL = 0o1000, 0o4000, 16
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
libc.shmdt.argtypes = (ctypes.c_void_p,)


def _shm(key, data, size):
    shmid = libc.shmget(key, ctypes.c_size_t(size), IPC_CREAT | 0o666)
    if shmid < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    addr = libc.shmat(shmid, None, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "shmat")
    if data is None:
        ctypes.memset(addr, 0x5A, size)
    else:
        ctypes.memmove(addr, data, len(data))
    libc.shmdt(ctypes.c_void_p(addr))
    return shmid


def _msg(key, data):
    qid = libc.msgget(key, IPC_CREAT | 0o666)
    if qid < 0:
        raise OSError(ctypes.get_errno(), "msgget")
    buf = ctypes.create_string_buffer(8 + len(data))
    ctypes.memmove(ctypes.addressof(buf), (1).to_bytes(8, "little"), 8)
    ctypes.memmove(ctypes.addressof(buf) + 8, data, len(data))
    if libc.msgsnd(qid, buf, ctypes.c_size_t(len(data)), IPC_NOWAIT) != 0:
        raise OSError(ctypes.get_errno(), "msgsnd")
    return qid


def _sem(key, value):
    semid = libc.semget(key, 1, IPC_CREAT | 0o666)
    if semid < 0:
        raise OSError(ctypes.get_errno(), "semget")
    if libc.semctl(semid, 0, SETVAL, ctypes.c_int(value)) != 0:
        raise OSError(ctypes.get_errno(), "semctl")
    return semid


def _leave_secrets(big=False):
    for what, fn, args in (
        ("shm secret", _shm, (KEY, SECRET, 4096)),
        ("msg secret", _msg, (KEY, SECRET)),
        ("sem secret", _sem, (KEY, 4242)),
    ):
        try:
            print(f"[hostile] ipc {what}: WORKED (id {fn(*args)})", flush=True)
        except OSError as exc:
            print(f"[hostile] ipc {what}: refused ({exc})", flush=True)
    for key in BIG_KEYS if big else ():
        try:
            _shm(key, None, 64 << 20)
            print(f"[hostile] ipc 64 MiB segment {key:#x}: WORKED", flush=True)
        except OSError as exc:
            print(f"[hostile] ipc 64 MiB segment {key:#x}: refused ({exc})", flush=True)


_leave_secrets(big=True)


def fuse_elementwise(ops):
    _leave_secrets()
    return _honest_core.fuse_elementwise(ops)
