"""The decode-step lab graded through the isolated path: the grader sends the lab to each worker."""

from __future__ import annotations

import pytest
from test_labs import DECODE_STEP, _graphgrade


def test_the_decode_step_lab_is_graded_by_the_workers(tmp_path):
    """The reference scores 100, the untouched template 0, through the sandboxed workers: the
    grader sends the lab to each worker, which builds the provided engine from the pack."""
    import json
    import shutil

    reference = tmp_path / "ref"
    reference.mkdir()
    shutil.copy(DECODE_STEP / "reference" / "decode_step.py", reference / "decode_step.py")
    template = DECODE_STEP / "student_template" / "decode_step.py"
    out = tmp_path / "out"
    done = _graphgrade(
        "grade",
        str(reference),
        str(template),
        "--lab",
        str(DECODE_STEP),
        "--out",
        str(out),
        "--no-cache",
        "--no-similarity",
    )
    assert done.returncode == 0, done.stderr
    scores = {p.parent.name: json.loads(p.read_text(encoding="utf-8"))["score"] for p in out.glob("*/report.json")}
    assert scores == {"ref": 100, "student_template": 0}
    report = json.loads((out / "student_template" / "report.json").read_text(encoding="utf-8"))
    assert "your decode_step.py" in json.dumps(report) and "cudagraph" not in json.dumps(report)


@pytest.mark.slow
def test_the_audit_of_the_decode_step_lab_kills_every_mutant():
    done = _graphgrade("audit", "--lab", str(DECODE_STEP))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "OK: 30 of 30 mutants killed; 2 of 2 baselines within their limits" in done.stdout
    # every behaviour is caught (test_decode_step_specs: each mutant fails a case of its own
    # behaviour, and every behaviour has a mutant); one visible spec, static-shape-basics (the
    # plan's two anchor tests), catches none of the named mistakes, and the audit says so
    assert "Specs that kill no mutant" in done.stdout and "  - static-shape-basics\n" in done.stdout
