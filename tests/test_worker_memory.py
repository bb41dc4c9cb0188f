"""The module-isolation worker's memory check (grader/run/worker/memory.py, issue 31.5): a case
that leaves memory held past the ceiling retires its worker, unless dropping the submission frees
it; a case that stays under the ceiling costs one read of /proc/self/statm."""

from __future__ import annotations

import numpy as np

from grader.run.worker import memory
from grader.run.worker.kernel import in_child

BIG = 200 << 20


def _held_after(keep: bool) -> bytes:
    ceiling = memory.Ceiling.after_import()
    held = [np.ones(BIG, dtype=np.uint8)]  # resident: every byte written
    dropped = []

    def drop() -> None:
        dropped.append(True)
        if not keep:
            held.clear()

    over = ceiling.held_after(drop)
    return f"{int(over)}{int(bool(dropped))}".encode()


def test_memory_freed_by_dropping_the_submission_does_not_retire_the_worker():
    assert in_child(lambda: _held_after(keep=False)) == b"01"


def test_memory_still_held_after_the_drop_retires_the_worker():
    assert in_child(lambda: _held_after(keep=True)) == b"11"


def test_a_case_under_the_ceiling_drops_nothing():
    def small() -> bytes:
        ceiling = memory.Ceiling.after_import()
        _ = np.ones(1 << 20)
        dropped = []
        return f"{int(ceiling.held_after(lambda: dropped.append(1)))}{len(dropped)}".encode()

    assert in_child(small) == b"00"
