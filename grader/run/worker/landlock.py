"""Linux Landlock (unprivileged, kernel >= 5.13): a worker may read only its allowlist, write only
its working directory, open no TCP connection (ABI 4), and signal or reach through an abstract
Unix socket no process outside its own sandbox (ABI 6). Landlock has no right for metadata:
``stat`` still works on any path (see :mod:`grader.run.worker.mounts` for what hides names)."""

from __future__ import annotations

import ctypes
import os
import stat

from grader.run.worker.kernel import PR_SET_NO_NEW_PRIVS, libc, prctl

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 1
LANDLOCK_SCOPE_SIGNAL = 2

# Filesystem access rights, by the Landlock ABI that introduced them.
_FS_V1 = (1 << 13) - 1  # execute .. make_sym
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_READ_ONLY = 1 | 4 | 8  # execute, read_file, read_dir
_NET_BIND_CONNECT = 1 | 2  # ABI 4


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    try:
        version = libc.syscall(
            SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION)
        )
    except Exception:  # noqa: BLE001 - no syscall() on this libc
        return 0
    return max(int(version), 0)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def apply_landlock(readable: tuple[str, ...], writable: tuple[str, ...]) -> int:
    """Restrict this process (and its future children) to the given paths. Returns the ABI used, 0 if none."""
    abi = landlock_abi()
    if abi < 1:
        return 0
    handled = _FS_V1
    if abi >= 2:
        handled |= _FS_REFER
    if abi >= 3:
        handled |= _FS_TRUNCATE
    if abi >= 5:
        handled |= _FS_IOCTL_DEV
    scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0
    attr = _RulesetAttr(handled, _NET_BIND_CONNECT if abi >= 4 else 0, scoped)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return 0
    try:
        read_rights = _READ_ONLY & handled
        write_rights = handled
        # one rule per path (a few hundred: the standard library's entries one by one): the
        # arguments that do not change are made once
        syscall, add_rule, open_path, fstat, close, is_dir = (
            libc.syscall,
            ctypes.c_long(SYS_LANDLOCK_ADD_RULE),
            os.open,
            os.fstat,
            os.close,
            stat.S_ISDIR,
        )
        fd_of, beneath, no_flags = ctypes.c_int(ruleset), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH), ctypes.c_uint32(0)
        rule = _PathBeneath(0, -1)
        rule_ref = ctypes.byref(rule)
        for rights, paths in ((read_rights, readable), (write_rights, writable)):
            file_rights = rights & (
                1 | 2 | 4 | _FS_TRUNCATE | _FS_IOCTL_DEV
            )  # a rule on a file may only carry file rights
            for path in paths:
                try:
                    fd = open_path(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    rule.allowed_access = rights if is_dir(fstat(fd).st_mode) else file_rights
                    rule.parent_fd = fd
                    syscall(add_rule, fd_of, beneath, rule_ref, no_flags)
                finally:
                    close(fd)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi
