"""Integrity flags for staff: a static scan of a submission for code that reaches into the grader
instead of doing the lab.

The sandbox is what stops such code; this scan tells staff that someone *tried*, so that a
person looks at it. A flag never changes a score: scoring does not read them, and student-facing
outputs do not show them. The rules are in :mod:`grader.judging.scan_rules` (what code can reach,
not how it spells a name), the reading of files in :mod:`grader.judging.scan_files`.

The scan runs outside the grader's process: a server (:mod:`grader.judging.scan_server`, a fresh
interpreter started with ``python -I -S``: no current folder, no site folder, no environment on
its path) started by a run's first submission forks a child per submission, with a CPU-time and
an address-space limit, when that submission's grading starts; the grader reads its flags when
the report is built, outside the lock judging takes, within a wall-clock budget. Whatever a
submission holds (seven 1 MiB files of attribute chains, say) costs that child; past a budget the
submission is graded as usual and flagged ``unscanned`` with the reason (``benchmarks/scan_budget.py``
measures the grader's cost).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from grader.judging import scan_files
from grader.judging.results import Flag
from grader.judging.scan_files import MAX_DEPTH, MAX_FILE_BYTES, MAX_FLAGS, MAX_TOTAL_BYTES  # noqa: F401
from grader.judging.scan_rules import RULES
from grader.judging.scan_server import OUT_OF_MEMORY
from grader.trusted_path import SAFE_CWD

SCAN_CPU_S = 30  # CPU seconds of one submission's scan (RLIMIT_CPU of its process)
SCAN_WALL_S = 90.0  # from its start to its answer, whatever the machine's load
SCAN_MEMORY_BYTES = 1 << 30  # its address space (RLIMIT_AS)
KILL_WAIT_S = 10.0  # how long a scan killed for its time is waited for
_GRADER_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding the grader package
_BOOT = "import sys\nsys.path.insert(0, sys.argv[1])\nfrom grader.judging.scan_server import serve\nserve()\n"


def _flags(raw: list) -> tuple[Flag, ...]:
    return tuple(Flag(rule, file, line, message) for rule, file, line, message in raw[:MAX_FLAGS])


def scan_source(source: bytes, file: str) -> list[Flag]:
    """Flags for one file's bytes, in this process (tests and tools; grading uses :func:`start_scan`)."""
    return list(_flags(scan_files.scan_source(source, file)))


def scan_submission(path) -> tuple[Flag, ...]:
    """Every flag for a submission (a directory, or one ``.py`` file), at most ``MAX_FLAGS``, in this
    process (tests and tools; grading uses :func:`start_scan`)."""
    return _flags(scan_files.scan_submission(path))


def _unscanned(reason: str) -> tuple[Flag, ...]:
    return (Flag("unscanned", ".", 0, f"{RULES['unscanned']}: {reason}"),)


def _answer(data) -> tuple[Flag, ...]:
    """The flags the scan's process sent, checked field by field."""
    if not isinstance(data, list):
        raise ValueError("not a list")
    for item in data:
        if not (
            isinstance(item, list)
            and len(item) == 4
            and item[0] in RULES
            and isinstance(item[1], str)
            and type(item[2]) is int
            and item[2] >= 0
            and isinstance(item[3], str)
        ):
            raise ValueError("not a flag")
    return _flags(data)


class ScanService:
    """The scan's server process (:mod:`grader.judging.scan_server`), started on first use: it forks
    one bounded child per submission. One per grading run; :meth:`close` ends it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._waiting: dict[int, PendingScan] = {}
        self._next = 0

    def _started(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _BOOT, _GRADER_ROOT],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=SAFE_CWD,  # and -I: no folder of a submission on its path
                env={},
                close_fds=True,
            )
            threading.Thread(target=self._read, args=(self._process,), daemon=True).start()
        return self._process

    def _send(self, message: dict) -> None:
        process = self._started()
        assert process.stdin is not None
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()

    def _read(self, process: subprocess.Popen) -> None:
        """The server's answers, each handed to the scan waiting for it; at its end, every scan
        still waiting is told it failed."""
        assert process.stdout is not None
        for line in process.stdout:
            try:
                answer = json.loads(line)
                with self._lock:
                    scan = self._waiting.pop(answer["id"], None)
            except (ValueError, KeyError, TypeError):
                continue
            if scan is not None:
                scan.answered(answer)
        with self._lock:  # the scans sent to this server; the next submission starts another
            if self._process is process:
                self._process = None
            left = [scan for scan in self._waiting.values() if scan.server is process]
            for scan in left:
                del self._waiting[scan.ident]
        for scan in left:
            scan.answered({"status": -1, "flags": []})
        try:
            process.wait(timeout=KILL_WAIT_S)  # reaped here when it ended on its own
        except subprocess.TimeoutExpired:
            pass

    def submit(self, path, cpu_s: int = SCAN_CPU_S, wall_s: float = SCAN_WALL_S) -> PendingScan:
        scan = PendingScan(self, Path(path), cpu_s, wall_s)
        if _is_reference_package(scan.path):
            scan.result = ()
            return scan
        with self._lock:
            self._next += 1
            scan.ident = self._next
            self._waiting[scan.ident] = scan
            try:
                scan.server = self._started()
                self._send(
                    {"id": scan.ident, "path": str(scan.path.resolve()), "cpu_s": cpu_s, "memory": SCAN_MEMORY_BYTES}
                )
            except OSError as exc:
                del self._waiting[scan.ident]
                scan.result = _unscanned(f"the scan could not start ({type(exc).__name__})")
        return scan

    def kill(self, ident: int) -> None:
        with self._lock:
            try:
                self._send({"kill": ident})
            except OSError:
                pass

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        try:
            assert process.stdin is not None
            process.stdin.close()  # the server kills what still runs and ends
            process.wait(timeout=KILL_WAIT_S)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()


class PendingScan:
    """The scan of one submission, running in a bounded process of its own from submission on."""

    def __init__(self, service: ScanService, path: Path, cpu_s: int, wall_s: float) -> None:
        self.service, self.path, self.cpu_s, self.wall_s = service, path, cpu_s, wall_s
        self.started = time.monotonic()
        self.ident = 0
        self.server: subprocess.Popen | None = None
        self.result: tuple[Flag, ...] | None = None
        self._answer: dict | None = None
        self._done = threading.Event()

    def answered(self, answer: dict) -> None:
        self._answer = answer
        self._done.set()

    def flags(self) -> tuple[Flag, ...]:
        """The flags, waiting for the scan within its wall-clock budget; past a budget, one
        ``unscanned`` flag that says which."""
        if self.result is not None:
            return self.result
        if not self._done.wait(max(0.0, self.wall_s - (time.monotonic() - self.started))):
            self.service.kill(self.ident)
            self._done.wait(KILL_WAIT_S)
            self.result = _unscanned(f"the scan ran past its time budget ({self.wall_s:g} s)")
            return self.result
        answer = self._answer or {}
        code = answer.get("status")
        if code in (-signal.SIGXCPU, -signal.SIGKILL):
            self.result = _unscanned(f"the scan ran past its CPU budget ({self.cpu_s} s)")
        elif code == OUT_OF_MEMORY:
            self.result = _unscanned(f"the scan ran past its memory budget ({SCAN_MEMORY_BYTES >> 20} MiB)")
        elif code != 0:
            self.result = _unscanned(f"the scan failed (status {code}); please report this")
        else:
            try:
                self.result = _answer(answer.get("flags"))
            except ValueError:
                self.result = _unscanned("the scan's answer could not be read; please report this")
        return self.result


def _is_reference_package(path: Path) -> bool:
    """The installed reference solution: the grader's own code (it imports itself, and its CUDA
    path holds a lock), graded by ``graphgrade grade`` with no argument; not a student's work."""
    import importlib.util

    spec = importlib.util.find_spec("reference")
    try:
        return (
            spec is not None
            and bool(spec.submodule_search_locations)
            and Path(list(spec.submodule_search_locations)[0]).resolve() == path.resolve()
        )
    except OSError:
        return False


def integrity_flags(path) -> tuple[Flag, ...]:
    """The flags of one submission as grading records them (in a bounded process of a service of
    its own; a grading run shares one :class:`ScanService`): none for the installed reference."""
    service = ScanService()
    try:
        return service.submit(path).flags()
    except Exception as exc:  # noqa: BLE001 - a scan bug must cost neither the grade nor the batch
        return _unscanned(f"the scan failed ({type(exc).__name__}); please report this")
    finally:
        service.close()
