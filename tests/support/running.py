"""Run one submission's cases through the real runner (a zygote, a scratch area, one slot)."""

from __future__ import annotations

from pathlib import Path

from grader.run.runner import RunSettings, ScratchArea, SubmissionRun, Zygote, case_messages, run_submission


def run_alone(sub: Path, cases, settings: RunSettings | None = None, ahead=None, **kwargs) -> SubmissionRun:
    with Zygote() as zygote:
        area = ScratchArea()
        try:
            return run_submission(
                zygote, area, 0, sub, cases, settings or RunSettings(), case_messages(cases), ahead, **kwargs
            )
        finally:
            area.close()
