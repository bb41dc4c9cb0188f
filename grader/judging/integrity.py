"""Integrity flags for staff: a static scan of a submission for code that reaches into the grader
instead of doing the lab.

The sandbox is what stops such code; this scan tells staff that someone *tried*, so that a
person looks at it. A flag never changes a score: scoring does not read them, and student-facing
outputs do not show them. The rules are in :mod:`grader.judging.scan_rules` (what code can reach,
not how it spells a name), the reading of files in :mod:`grader.judging.scan_files`.

The scan runs in a process of its own, never in the grader's: a fresh interpreter
(``python -I -S``: no current folder, no site folder, no environment on its path) with a CPU-time
and an address-space limit, started when a submission's grading starts and read when its report
is built, outside the lock judging takes. Whatever a submission holds (seven 1 MiB files of
attribute chains, say) costs that process; past its budget the submission is graded as usual and
flagged ``unscanned`` with the reason (``benchmarks/scan_budget.py`` measures the grader's cost).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from grader.judging import scan_files
from grader.judging.results import Flag
from grader.judging.scan_files import MAX_DEPTH, MAX_FILE_BYTES, MAX_FLAGS, MAX_TOTAL_BYTES  # noqa: F401
from grader.judging.scan_rules import RULES

SCAN_CPU_S = 30  # CPU seconds of the scan process (RLIMIT_CPU)
SCAN_WALL_S = 90.0  # from its start to its answer, whatever the machine's load
SCAN_MEMORY_BYTES = 1 << 30  # its address space (RLIMIT_AS)
MAX_ANSWER_BYTES = 1 << 20
OUT_OF_MEMORY = 3  # the scan process's exit status when it ran out of memory
_GRADER_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding the grader package
_BOOT = (
    "import os, resource, sys\n"
    "cpu, memory, root = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]\n"
    "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))\n"
    "resource.setrlimit(resource.RLIMIT_AS, (memory, memory))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "sys.path.insert(0, root)\n"
    "try:\n"
    "    from grader.judging.scan_files import main\n"
    "    sys.exit(main(sys.argv))\n"
    "except MemoryError:\n"
    f"    os._exit({OUT_OF_MEMORY})\n"
)


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


def _answer(raw: bytes) -> tuple[Flag, ...]:
    """The scan process's line of JSON, checked field by field."""
    data = json.loads(raw.decode("utf-8"))
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


class PendingScan:
    """The scan of one submission, running in its own bounded process from construction on."""

    def __init__(self, path, cpu_s: int = SCAN_CPU_S, wall_s: float = SCAN_WALL_S) -> None:
        self.path = Path(path)
        self.cpu_s, self.wall_s = cpu_s, wall_s
        self.started = time.monotonic()
        self.process: subprocess.Popen | None = None
        self.result: tuple[Flag, ...] | None = None
        if _is_reference_package(self.path):
            self.result = ()
            return
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _BOOT, str(self.path.resolve())]
                + [str(cpu_s), str(SCAN_MEMORY_BYTES), _GRADER_ROOT],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env={},
                close_fds=True,
            )
        except OSError as exc:
            self.result = _unscanned(f"the scan could not start ({type(exc).__name__})")

    def flags(self) -> tuple[Flag, ...]:
        """The flags, waiting for the scan within its wall-clock budget; past a budget, one
        ``unscanned`` flag that says which."""
        if self.result is not None:
            return self.result
        assert self.process is not None
        left = max(0.1, self.wall_s - (time.monotonic() - self.started))
        try:
            out, _ = self.process.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            self.result = _unscanned(f"the scan ran past its time budget ({self.wall_s:.0f} s)")
            return self.result
        code = self.process.returncode
        if code in (-signal.SIGXCPU, -signal.SIGKILL):
            self.result = _unscanned(f"the scan ran past its CPU budget ({self.cpu_s} s)")
        elif code == OUT_OF_MEMORY:
            self.result = _unscanned(f"the scan ran past its memory budget ({SCAN_MEMORY_BYTES >> 20} MiB)")
        elif code != 0 or len(out) > MAX_ANSWER_BYTES:
            self.result = _unscanned(f"the scan failed (exit status {code}); please report this")
        else:
            try:
                self.result = _answer(out)
            except (ValueError, UnicodeDecodeError):
                self.result = _unscanned("the scan's answer could not be read; please report this")
        return self.result

    def cancel(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


def start_scan(path) -> PendingScan:
    return PendingScan(path)


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
    """The flags of one submission as grading records them (in a bounded process): none for the
    installed reference."""
    try:
        return start_scan(path).flags()
    except Exception as exc:  # noqa: BLE001 - a scan bug must cost neither the grade nor the batch
        return _unscanned(f"the scan failed ({type(exc).__name__}); please report this")
