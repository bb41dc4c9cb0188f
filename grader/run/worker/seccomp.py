"""The seccomp filter every worker runs under: a deny-list of the system calls that reach past
what the other layers confine (see SECURITY.md).

* no socket but a Unix one (so no UDP, no raw or netlink socket either, which Landlock does
  not cover), no io_uring (which could open them behind the filter's back);
* no kernel keyring (``add_key``, ``request_key``, ``keyctl``: keys outlive the process);
* no new namespace (``unshare`` or ``clone`` with a ``CLONE_NEW*`` flag, ``setns``; ``clone3``
  cannot be filtered by its flags, which live in memory, so it fails with ``ENOSYS`` and the C
  library falls back to ``clone``), no process outside its own tree (``clone`` with
  ``CLONE_PARENT``);
* no state kept on an inode that another worker can see: no file lock of any kind (``flock``;
  ``fcntl`` record locks ``F_SETLK``/``F_SETLKW``/``F_GETLK`` and open-file-description locks
  ``F_OFD_*``), no lease (``F_SETLEASE``/``F_GETLEASE``), no directory notification
  (``F_NOTIFY``), no inotify or fanotify watch: each of these lets one process see what another
  did to a file both can read (the standard library's ``os.py``, say), which is a channel
  between two submissions graded at once. Nor the page-cache state of a shared file, the other
  thing two readers share: no ``posix_fadvise`` (which can evict a page another process then
  finds missing), no ``cachestat``, no ``preadv2``/``pwritev2`` with ``RWF_NOWAIT`` (which
  tells whether a page is cached without reading it in);
* no system call of a foreign ABI (x32, 32-bit compat).
"""

from __future__ import annotations

import ctypes
import errno
import os

from grader.run.worker.kernel import PR_SET_NO_NEW_PRIVS, REFUSED_CLONE_FLAGS, libc, prctl

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
# machine: (AUDIT_ARCH_*, syscall numbers)
SECCOMP_ARCH = {
    "x86_64": (
        0xC000003E,
        {
            "socket": 41,
            "io_uring_setup": 425,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "unshare": 272,
            "clone": 56,
            "clone3": 435,
            "setns": 308,
            "flock": 73,
            "fcntl": 72,
            "inotify_init": 253,
            "inotify_init1": 294,
            "inotify_add_watch": 254,
            "fanotify_init": 300,
            "fanotify_mark": 301,
            "fadvise64": 221,
            "cachestat": 451,
            "preadv2": 327,
            "pwritev2": 328,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "socket": 198,
            "io_uring_setup": 425,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "unshare": 97,
            "clone": 220,
            "clone3": 435,
            "setns": 268,
            "flock": 32,
            "fcntl": 25,
            "inotify_init1": 26,  # no inotify_init on aarch64
            "inotify_add_watch": 27,
            "fanotify_init": 262,
            "fanotify_mark": 263,
            "fadvise64": 223,
            "cachestat": 451,
            "preadv2": 286,
            "pwritev2": 287,
        },
    ),
}
# Refused outright, with EPERM (the lock, lease, notification and page-cache calls above).
REFUSED_CALLS = (
    "io_uring_setup",
    "add_key",
    "request_key",
    "keyctl",
    "setns",
    "flock",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "fanotify_init",
    "fanotify_mark",
    "fadvise64",
    "cachestat",
)
# fcntl commands that read or set state kept on the inode, which every opener of the file shares.
F_GETLK, F_SETLK, F_SETLKW = 5, 6, 7
F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 36, 37, 38
F_SETLEASE, F_GETLEASE, F_NOTIFY = 1024, 1025, 1026
REFUSED_FCNTL = (F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE, F_NOTIFY)
RWF_NOWAIT = 0x08

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_X32_SYSCALL_BIT = 0x40000000
_ARG0_LOW = 16  # offset of args[0]'s low 32 bits in struct seccomp_data (little-endian)
_ARG1_LOW = _ARG0_LOW + 8
_ARG5_LOW = _ARG0_LOW + 5 * 8


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _assemble(program: list[tuple]) -> list[tuple[int, int, int, int]]:
    """Classic BPF with labels: ``("label", name)`` marks a place; a jump's targets may be
    label names (resolved to the relative offsets BPF wants) or 0 (the next instruction)."""
    labels, position = {}, 0
    for item in program:
        if item[0] == "label":
            labels[item[1]] = position
        else:
            position += 1
    out = []
    for item in program:
        if item[0] == "label":
            continue
        code, jt, jf, k = item
        here = len(out)
        jt = labels[jt] - here - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - here - 1 if isinstance(jf, str) else jf
        out.append((code, jt, jf, k))
    return out


def seccomp_program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The filter every worker runs under (None on a machine it does not know)."""
    known = SECCOMP_ARCH.get(machine)
    if known is None:
        return None
    arch, nr = known
    refused = [(_JEQ, "eperm", 0, nr[name]) for name in REFUSED_CALLS if name in nr]
    return _assemble(
        [
            (_LD_ABS, 0, 0, 4),  # arch
            (_JEQ, 0, "eperm", arch),  # a foreign ABI (32-bit compat)
            (_LD_ABS, 0, 0, 0),  # syscall number
            (_JGE, "eperm", 0, _X32_SYSCALL_BIT),  # x32
            (_JEQ, "socket", 0, nr["socket"]),
            (_JEQ, "namespace_flags", 0, nr["unshare"]),
            (_JEQ, "namespace_flags", 0, nr["clone"]),
            (_JEQ, "enosys", 0, nr["clone3"]),  # its flags live in memory, out of a filter's reach
            (_JEQ, "fcntl", 0, nr["fcntl"]),
            (_JEQ, "rw_flags", 0, nr["preadv2"]),
            (_JEQ, "rw_flags", 0, nr["pwritev2"]),
            *refused,
            (_RET, 0, 0, _RET_ALLOW),
            ("label", "socket"),
            (_LD_ABS, 0, 0, _ARG0_LOW),  # the address family
            (_JEQ, "allow", "eacces", 1),  # AF_UNIX only
            ("label", "namespace_flags"),
            (_LD_ABS, 0, 0, _ARG0_LOW),  # unshare's and clone's flags (the kernel reads their low 32 bits)
            (_JSET, "eperm", "allow", REFUSED_CLONE_FLAGS),
            ("label", "fcntl"),
            (_LD_ABS, 0, 0, _ARG1_LOW),  # the command (an int: its low 32 bits)
            *[(_JEQ, "eperm", 0, command) for command in REFUSED_FCNTL],
            (_RET, 0, 0, _RET_ALLOW),
            ("label", "rw_flags"),
            (_LD_ABS, 0, 0, _ARG5_LOW),  # preadv2's and pwritev2's flags
            (_JSET, "eperm", "allow", RWF_NOWAIT),
            ("label", "allow"),
            (_RET, 0, 0, _RET_ALLOW),
            ("label", "eacces"),
            (_RET, 0, 0, _RET_ERRNO | errno.EACCES),
            ("label", "enosys"),
            (_RET, 0, 0, _RET_ERRNO | errno.ENOSYS),
            ("label", "eperm"),
            (_RET, 0, 0, _RET_ERRNO | errno.EPERM),
        ]
    )


def apply_socket_filter() -> bool:
    """Install :func:`seccomp_program` for this process and its children (see the module's
    docstring for what it refuses). False where unsupported."""
    program = seccomp_program(os.uname().machine)
    if program is None:
        return False
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    prog = _SockFprog(len(program), ctypes.cast(filters, ctypes.POINTER(_SockFilter)))
    try:
        prctl(PR_SET_NO_NEW_PRIVS, 1)
    except OSError:
        return False
    return libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog), 0, 0) == 0
