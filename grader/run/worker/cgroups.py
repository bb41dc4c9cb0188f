"""A memory and a process limit for each worker's whole process tree, where the host gives a
writable cgroup.

Resource limits (``setrlimit``) are per process: 64 processes of 4 GiB each still add up to
256 GiB. A cgroup bounds the sum. The zygote (root) makes one folder for the grading run beneath
its own cgroup, and one per worker beneath that with ``memory`` and ``pids`` limits; the worker
moves itself in (while still root, before it drops privileges or runs submission code), so
every process it and its cases start is counted there. When the worker ends, the zygote kills
what is left in it (``cgroup.kill`` on v2) and removes the folder.

Both layouts are handled:

* cgroup v2 (one unified hierarchy): the run's folder gets ``+memory +pids`` in its
  ``cgroup.subtree_control``; that needs the controllers delegated to the zygote's own cgroup
  (they are in its ``cgroup.subtree_control`` already, or can be enabled there);
* cgroup v1: the ``memory`` and ``pids`` hierarchies, each mounted writable.

Where neither works (not root, a container that mounts ``/sys/fs/cgroup`` read-only, controllers
not delegated), :func:`setup` says why and grading goes on without: see SECURITY.md.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field

RUN_PREFIX = "graphgrade-"


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(fstype, root in the hierarchy, mount point, super options) of every cgroup mount."""
    found = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields, tail = left.split(), right.split()
                if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                    found.append((tail[0], fields[3], fields[4], set(tail[2].split(","))))
    except OSError:
        pass
    return found


def _own_cgroups() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's cgroup path."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for name in controllers.split(",") if controllers else [""]:
                    paths[name] = path
    except (OSError, ValueError):
        pass
    return paths


def _folder(mount_root: str, mount_point: str, path: str) -> str | None:
    if mount_root != "/" and not (path == mount_root or path.startswith(mount_root + "/")):
        return None
    rel = path[len(mount_root) :] if mount_root != "/" else path
    return os.path.join(mount_point, rel.lstrip("/"))


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(folder: str) -> None:
    """Remove a cgroup folder and the (empty) folders beneath it, deepest first."""
    stack, order = [folder], []
    while stack:
        current = stack.pop()
        order.append(current)
        try:
            stack.extend(e.path for e in os.scandir(current) if e.is_dir(follow_symlinks=False))
        except OSError:
            pass
    for path in reversed(order):
        try:
            os.rmdir(path)
        except OSError:
            pass


@dataclass
class RunCgroups:
    """The grading run's cgroup folders: one per hierarchy used (v2: one; v1: memory and pids)."""

    version: int
    roots: dict[str, str]  # hierarchy ("unified", "memory", "pids") -> the run's folder
    memory_bytes: int
    processes: int
    workers: dict[str, list[str]] = field(default_factory=dict)  # name -> its folders
    count: int = 0

    def make_worker(self) -> tuple[str, tuple[str, ...]]:
        """A fresh folder (per hierarchy) with the limits set; returns its name and the
        ``cgroup.procs`` files the worker must join."""
        self.count += 1
        name = f"w{self.count}"
        folders = []
        try:
            for hierarchy, root in self.roots.items():
                folder = os.path.join(root, name)
                os.mkdir(folder)
                folders.append(folder)
                if hierarchy == "unified":
                    _write(os.path.join(folder, "memory.max"), str(self.memory_bytes))
                    if os.path.exists(os.path.join(folder, "memory.swap.max")):
                        _write(os.path.join(folder, "memory.swap.max"), "0")
                    _write(os.path.join(folder, "pids.max"), str(self.processes))
                elif hierarchy == "memory":
                    _write(os.path.join(folder, "memory.limit_in_bytes"), str(self.memory_bytes))
                    if os.path.exists(os.path.join(folder, "memory.memsw.limit_in_bytes")):
                        _write(os.path.join(folder, "memory.memsw.limit_in_bytes"), str(self.memory_bytes))
                else:
                    _write(os.path.join(folder, "pids.max"), str(self.processes))
        except OSError:
            for folder in folders:
                _remove(folder)
            raise
        self.workers[name] = folders
        return name, tuple(os.path.join(f, "cgroup.procs") for f in folders)

    def empty_worker(self, name: str) -> bool:
        """Kill whatever still runs in the worker's folders; returns whether every folder was then
        seen holding no live process. Every process the worker's tree ever started (under the
        worker's uid or not) was in there: the worker joined its folders before it dropped root
        or ran a line of submission code, children inherit them, and no process of a sandbox uid
        may move itself out (the files that would let it are root's)."""
        emptied = True
        for folder in self.workers.get(name, []):
            kill_file = os.path.join(folder, "cgroup.kill")
            deadline = time.monotonic() + 2.0
            seen_empty = False
            while time.monotonic() < deadline:
                try:
                    with open(os.path.join(folder, "cgroup.procs")) as f:
                        pids = [int(p) for p in f.read().split()]
                except (OSError, ValueError):
                    break
                if not pids:
                    seen_empty = True
                    break
                if os.path.exists(kill_file):
                    try:
                        _write(kill_file, "1")
                    except OSError:
                        pass
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.005)
            emptied = emptied and seen_empty
        return emptied

    def remove_worker(self, name: str) -> None:
        """Kill whatever still runs in the worker's folders, then remove them."""
        self.empty_worker(name)
        for folder in self.workers.pop(name, []):
            _remove(folder)

    def close(self) -> None:
        for name in list(self.workers):
            self.remove_worker(name)
        for root in self.roots.values():
            _remove(root)


def _clean_stale(parent: str) -> None:
    """Remove the empty folders of earlier grading runs whose zygote is gone (killed)."""
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(RUN_PREFIX) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(RUN_PREFIX) :]
        if pid.isdigit() and not _pid_alive(int(pid)):
            _remove(entry.path)


def _setup_v2(mount: tuple[str, str, str, set[str]], path: str, memory_bytes: int, processes: int) -> RunCgroups:
    _, mount_root, mount_point, _ = mount
    own = _folder(mount_root, mount_point, path)
    if own is None:
        raise OSError("this process's cgroup is outside the mounted hierarchy")
    with open(os.path.join(own, "cgroup.controllers")) as f:
        available = set(f.read().split())
    if not {"memory", "pids"} <= available:
        raise OSError(f"the memory and pids controllers are not delegated to {own}")
    with open(os.path.join(own, "cgroup.subtree_control")) as f:
        enabled = set(f.read().split())
    if not {"memory", "pids"} <= enabled:
        _write(os.path.join(own, "cgroup.subtree_control"), "+memory +pids")  # refused where processes live in it
    _clean_stale(own)
    root = os.path.join(own, f"{RUN_PREFIX}{os.getpid()}")
    os.mkdir(root)
    try:
        _write(os.path.join(root, "cgroup.subtree_control"), "+memory +pids")
    except OSError:
        _remove(root)
        raise
    return RunCgroups(2, {"unified": root}, memory_bytes, processes)


def _setup_v1(
    mounts: list[tuple[str, str, str, set[str]]], paths: dict[str, str], memory_bytes: int, processes: int
) -> RunCgroups:
    roots: dict[str, str] = {}
    try:
        for controller in ("memory", "pids"):
            mount = next((m for m in mounts if m[0] == "cgroup" and controller in m[3]), None)
            if mount is None or controller not in paths:
                raise OSError(f"no cgroup v1 {controller} hierarchy")
            own = _folder(mount[1], mount[2], paths[controller])
            if own is None:
                raise OSError(f"this process's {controller} cgroup is outside the mounted hierarchy")
            _clean_stale(own)
            root = os.path.join(own, f"{RUN_PREFIX}{os.getpid()}")
            os.mkdir(root)
            roots[controller] = root
    except OSError:
        for root in roots.values():
            _remove(root)
        raise
    return RunCgroups(1, roots, memory_bytes, processes)


def setup(memory_bytes: int, processes: int) -> tuple[RunCgroups | None, str]:
    """The run's cgroups, or None and why not. Call as root, once, in the zygote."""
    if os.geteuid() != 0:
        return None, "not root"
    mounts, paths = _mounts(), _own_cgroups()
    reasons = []
    v2 = next((m for m in mounts if m[0] == "cgroup2"), None)
    if v2 is not None and "" in paths:
        try:
            return _setup_v2(v2, paths[""], memory_bytes, processes), "cgroup v2"
        except OSError as exc:
            reasons.append(f"v2: {exc.strerror or exc}")
    try:
        return _setup_v1(mounts, paths, memory_bytes, processes), "cgroup v1"
    except OSError as exc:
        reasons.append(f"v1: {exc.strerror or exc}")
    return None, "; ".join(reasons)


def join(procs_files: tuple[str, ...]) -> None:
    """Move the calling process into the worker's cgroup(s). Raises where it cannot."""
    for path in procs_files:
        _write(path, str(os.getpid()))
