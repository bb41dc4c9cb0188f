"""The grader's client of the worker zygote (:mod:`grader.run.worker.zygote`): ask it for a
confined worker, end one, and say which isolation layers a worker gets on this machine."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import grader
from grader.trusted_path import SAFE_CWD, child_environment


class Zygote:
    """Client of the zygote process; safe to share between threads."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        root = str(Path(grader.__file__).resolve().parents[1])
        env = dict(os.environ)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env = child_environment(env)  # and started in SAFE_CWD: nothing on its path is the caller's folder
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "grader.run.worker.zygote", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=SAFE_CWD,
        )
        theirs.close()
        self._sock = ours
        self._lock = threading.Lock()

    def _ask(self, request: dict, fds: tuple[int, ...] = ()) -> dict:
        with self._lock:
            data = json.dumps(request).encode()
            if fds:
                socket.send_fds(self._sock, [data], list(fds))
            else:
                self._sock.sendall(data)
            reply = self._sock.recv(65536)
        if not reply:
            raise RuntimeError("the grader's worker zygote stopped unexpectedly")
        return json.loads(reply)

    def spawn(self, request: dict, fds: tuple[int, int, int]) -> int:
        return int(self._ask({"op": "spawn", **request}, fds)["pid"])

    def kill(self, pid: int, uid: int | None) -> int | None:
        """End a worker; returns its exit code (negative: a signal), if the zygote saw it end."""
        ended = self._ask({"op": "kill", "pid": pid, "uid": uid}).get("ended")
        return ended if isinstance(ended, int) else None

    def layers(self) -> dict:
        """Which isolation layers a worker gets on this machine (see :func:`lost_layers`)."""
        return self._ask({"op": "layers"})

    def close(self) -> None:
        try:
            self._sock.close()
        finally:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def lost_layers(layers: dict) -> list[str]:
    """One line per isolation layer a grading run as root should have and does not here
    (SECURITY.md, "Deployments", says what each costs). Nothing for a normal user: a student
    grading their own work on their own machine risks nothing."""
    if not layers.get("root"):
        return []
    lost = []
    if not layers.get("mount_namespace"):
        lost.append(
            "no mount namespace per worker (unshare refused): no private tmpfs, no read-only view, no hidden names: stat finds the names, sizes and times of the grader's files, reads move a shared file's access time; Landlock still refuses to open them"
        )
    if layers.get("mount_namespace") and not layers.get("pid_namespace"):
        lost.append(
            "no PID namespace per worker (unshare refused): submissions graded at once can read each other's per-process state by pid (affinity, nice value, scheduling policy); grade with --jobs 1 to close it"
        )
    if not layers.get("ipc_namespace"):
        lost.append(
            "no IPC namespace per worker (unshare refused): submissions graded at once share System V IPC; each uid's objects are still removed between submissions"
        )
    if not layers.get("net_namespace"):
        lost.append(
            "no network namespace per worker (unshare refused): the seccomp filter and Landlock still refuse sockets"
        )
    if not layers.get("cgroup"):
        lost.append(
            f"no cgroup memory and process limit per worker ({layers.get('cgroup_detail')}): only per-process limits apply"
        )
    if not layers.get("landlock_abi"):
        lost.append("no Landlock: workers read and write what their uid may (world-readable files included)")
    if not layers.get("seccomp"):
        lost.append("no seccomp filter on this machine type: sockets, keyrings and namespaces are not filtered")
    return lost
