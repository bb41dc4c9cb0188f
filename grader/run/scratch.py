"""Scratch space: one private directory per concurrent slot, holding a fresh copy of the
submission it runs (bounded, :mod:`grader.run.copying`), given to the slot's sandbox uid."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

from grader.run.copying import SubmissionProblem, copy_submission, remove_tree
from grader.run.worker.uids import UidLease


def running_as_root() -> bool:
    return os.geteuid() == 0


class ScratchArea:
    """A private base directory with one scratch directory per concurrent slot."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="graphgrade-"))
        os.chmod(self.base, 0o711)  # sandbox uids may pass through to their own slot, not list
        # uids this run holds alone: ending a worker kills every process of its uid (see grader.run.worker.uids)
        self.uids = UidLease() if running_as_root() else None

    def uid_for(self, slot: int) -> int | None:
        return self.uids.uid(slot) if self.uids is not None else None

    def prepare(self, slot: int, submission: Path, deadline: float = math.inf) -> tuple[Path, Path, Path]:
        """Fresh scratch for a slot holding a copy of the submission, and an empty output log
        (outside the scratch, written through a descriptor only); returns (scratch, code dir, log)."""
        scratch, code = self.fresh_copy(slot, submission, deadline)
        log = self.base / f"slot{slot}.log"
        fd = os.open(log, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        os.close(fd)
        return scratch, code, log

    def fresh_copy(self, slot: int, submission: Path, deadline: float = math.inf) -> tuple[Path, Path]:
        """Empty the slot's scratch and copy the submission in again: a replacement worker starts
        from the submission as handed in, not from what an earlier case left there. Bounded
        (grader.run.copying); the copy counts against the submission's time budget (``deadline``)."""
        scratch = self.base / f"slot{slot}"
        remove_tree(scratch)
        scratch.mkdir(mode=0o700)
        code = scratch / "submission"
        code.mkdir()
        try:
            made = copy_submission(submission, code, deadline)
        except OSError as exc:
            raise SubmissionProblem(
                f"{submission.name}: could not be copied for grading ({exc.strerror or type(exc).__name__})"
            ) from None
        uid = self.uid_for(slot)
        if uid is not None:
            for path in [scratch, code, *made]:  # what the copy made, and nothing else: bounded
                os.lchown(path, uid, uid)
        return scratch, code

    def close(self) -> None:
        remove_tree(self.base)
        if self.uids is not None:
            self.uids.close()
