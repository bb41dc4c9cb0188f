"""Count the traced re-runs a grading starts (grader.run.relocating, issue 34): the folder name of
each submission whose first causes' cases ran again."""

from __future__ import annotations

from pathlib import Path

import grader.commands.grade as grade_module


def count_reruns(monkeypatch) -> list[str]:
    """The list a grading in this test appends each re-run submission's folder name to."""
    reran: list[str] = []
    real = grade_module.rerun_traced

    def counted(zygote, area, slot, submission, *rest):
        reran.append(Path(submission).name)
        return real(zygote, area, slot, submission, *rest)

    monkeypatch.setattr(grade_module, "rerun_traced", counted)
    return reran
