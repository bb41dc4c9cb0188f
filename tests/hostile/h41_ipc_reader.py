"""Hostile: looks, at import and in every case it runs, for what h40_ipc_writer left in System V
IPC (its well-known keys, or any segment or queue it can list), and prints what it finds into
its own visible output.

Must get: it finds nothing, in the same batch as the writer and in a later run; it earns its
own points honestly."""
import ctypes

import _honest_core
from _honest_core import *  # noqa: F401,F403

KEY = 0x47474701
IPC_NOWAIT, MSG_NOERROR, GETVAL, SHM_RDONLY = 0o4000, 0o10000, 12, 0o10000
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
libc.shmdt.argtypes = (ctypes.c_void_p,)


def _ids(kind):
    try:
        with open(f"/proc/sysvipc/{kind}") as f:
            return [int(line.split()[1]) for line in f.readlines()[1:]]
    except (OSError, ValueError, IndexError):
        return []


def _look():
    found = []
    shmid = libc.shmget(KEY, 0, 0)
    for sid in {shmid, *_ids("shm")} - {-1}:
        addr = libc.shmat(sid, None, SHM_RDONLY)
        if addr not in (None, ctypes.c_void_p(-1).value):
            found.append(f"shm {sid}: {ctypes.string_at(addr, 40)!r}")
            libc.shmdt(ctypes.c_void_p(addr))
    qid = libc.msgget(KEY, 0)
    for q in {qid, *_ids("msg")} - {-1}:
        buf = ctypes.create_string_buffer(8 + 256)
        n = libc.msgrcv(q, buf, ctypes.c_size_t(256), 0, IPC_NOWAIT | MSG_NOERROR)
        if n >= 0:
            found.append(f"msg {q}: {buf.raw[8:8 + n]!r}")
    semid = libc.semget(KEY, 1, 0)
    for s in {semid, *_ids("sem")} - {-1}:
        value = libc.semctl(s, 0, GETVAL)
        if value >= 0:
            found.append(f"sem {s}: value {value}")
    if found:
        print(f"[hostile] ipc FOUND {found}", flush=True)
    else:
        print("[hostile] ipc: found nothing", flush=True)
    return found


_look()


def run_eager(ops, x):
    _look()
    return _honest_core.run_eager(ops, x)


def fuse_elementwise(ops):
    _look()
    return _honest_core.fuse_elementwise(ops)
