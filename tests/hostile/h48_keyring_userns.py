"""Hostile: does the lab, and at import and in every fusion case tries the kernel keyring
(add_key to its user keyring, request_key, keyctl) and namespaces (unshare and clone with
CLONE_NEWUSER, clone3, setns), which could keep data across runs or widen the kernel's attack
surface, and a process outside its worker's tree (clone with CLONE_PARENT).

Must get: every call refused (seccomp); it earns its own points honestly."""
import ctypes
import os
import platform

import _honest_core
from _honest_core import *  # noqa: F401,F403

NR = {
    "x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "clone": 56, "clone3": 435, "setns": 308},
    "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97, "clone": 220, "clone3": 435, "setns": 268},
}.get(platform.machine(), {})
KEY_SPEC_USER_KEYRING, KEYCTL_GET_KEYRING_ID = -4, 0
CLONE_NEWUSER, CLONE_NEWNET, CLONE_PARENT, SIGCHLD = 0x10000000, 0x40000000, 0x00008000, 17
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def _call(what, *args):
    ctypes.set_errno(0)
    result = libc.syscall(*args)
    if result == 0 and what.startswith("clone"):
        os._exit(0)  # a child was made: end it at once
    if result < 0:
        print(f"[hostile] {what}: refused (errno {ctypes.get_errno()} {os.strerror(ctypes.get_errno())})", flush=True)
    else:
        print(f"[hostile] {what}: WORKED ({result})", flush=True)
        if what.startswith("clone"):
            os.waitpid(result, 0)


def _try_everything():
    if not NR:
        print("[hostile] keyring: unknown machine", flush=True)
        return
    c = ctypes.c_char_p
    _call("add_key", NR["add_key"], c(b"user"), c(b"graphgrade-hostile"), c(b"kept across runs"), ctypes.c_size_t(16), ctypes.c_int(KEY_SPEC_USER_KEYRING))
    _call("request_key", NR["request_key"], c(b"user"), c(b"graphgrade-hostile"), None, ctypes.c_int(0))
    _call("keyctl", NR["keyctl"], ctypes.c_int(KEYCTL_GET_KEYRING_ID), ctypes.c_int(KEY_SPEC_USER_KEYRING), ctypes.c_int(1))
    _call("unshare(CLONE_NEWUSER)", NR["unshare"], ctypes.c_ulong(CLONE_NEWUSER))
    _call("unshare(CLONE_NEWUSER|CLONE_NEWNET)", NR["unshare"], ctypes.c_ulong(CLONE_NEWUSER | CLONE_NEWNET))
    _call("clone(CLONE_NEWUSER)", NR["clone"], ctypes.c_ulong(CLONE_NEWUSER | SIGCHLD), None, None, None, ctypes.c_ulong(0))
    _call("clone(CLONE_PARENT)", NR["clone"], ctypes.c_ulong(CLONE_PARENT | SIGCHLD), None, None, None, ctypes.c_ulong(0))
    _call("clone3", NR["clone3"], None, ctypes.c_size_t(0))
    fd = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        _call("setns", NR["setns"], ctypes.c_int(fd), ctypes.c_int(0))
    finally:
        os.close(fd)


_try_everything()


def fuse_elementwise(ops):
    _try_everything()
    return _honest_core.fuse_elementwise(ops)
