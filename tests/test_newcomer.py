"""Issue 27's loose ends, each where it lives: a key typo's "did you mean", results.json's
execution time, the hosted graders' notation key, run_autograder's last line."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.suite.loader import load_spec_text
from grader.suite.spec_reading import SpecError

ROOT = Path(__file__).resolve().parents[1]


def _spec_error(text: str) -> str:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "specs/typo.yaml")
    return str(caught.value)


GOOD = (ROOT / "specs" / "02_eager.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "typo, line, guess",
    [
        ("    tag: ", "    tgas: ", "tag"),
        ("    visibility: ", "    visiblity: ", "visibility"),
        ("    hint: ", "    hnit: ", "hint"),
    ],
)
def test_a_key_typo_says_did_you_mean_with_file_and_line(typo, line, guess):
    text = GOOD.replace(typo, line, 1)
    at = text.splitlines().index(next(x for x in text.splitlines() if x.startswith(line))) + 1
    message = _spec_error(text)
    assert message.startswith(f"specs/typo.yaml:{at}: ")
    assert f"did you mean {guess!r}?" in message and "expected one of:" in message


def test_an_unlike_key_gets_no_guess():
    message = _spec_error(GOOD.replace("    hint: ", "    zzzzzzzz: ", 1))
    assert "unknown key" in message and "did you mean" not in message


# ------------------------------------------------------------------ the hosted graders' notation key
def _shorthand_case():
    from dataclasses import replace

    from test_reports_samples import REPLAY_FAIL

    from grader.judging.results import StepLine

    steps = (
        StepLine(0, "runner = PiecewiseGraphRunner(ops=[relu, attention(5), tanh], is_capturable=CEC)", "returned"),
        StepLine(1, "runner(x: float32[4, 8] seed 1)", "returned float32[4, 8]"),
    )
    return replace(REPLAY_FAIL, steps=steps)


def test_gradescope_and_prairielearn_text_carries_the_notation_key():
    from test_reports_samples import make_report

    from reports.gradescope import to_gradescope
    from reports.prairielearn import to_prairielearn

    report = make_report("alice", [_shorthand_case()])
    outputs = [
        to_gradescope(report)["tests"][0]["output"],
        next(t["output"] for t in to_prairielearn(report)["tests"] if t["output"]),
    ]
    for text in outputs:
        assert "is_capturable=CEC" in text and "float32[4, 8] seed 1" in text
        key = text.split("\n\nNotation:\n", 1)[1]
        assert "is_capturable=CEC: one letter per op, in order: C the op may be captured" in key
        assert "float32[4, 8] seed 1: an input array of that dtype and shape" in key
        assert "attention(5)" in key


def test_no_key_where_no_shorthand_is_used():
    from dataclasses import replace

    from test_reports_samples import REPLAY_FAIL, make_report

    from grader.judging.results import StepLine
    from reports.gradescope import to_gradescope

    plain = replace(REPLAY_FAIL, steps=(StepLine(0, "runner = GraphRunner(ops=[relu])", "returned a GraphRunner"),))
    plain = replace(plain, checks=(), description="A plain case.")
    assert "Notation:" not in to_gradescope(make_report("alice", [plain]))["tests"][0]["output"]


def test_the_benchmarks_device_ops_live_beside_it_and_cuda_still_exports_them():
    import reference.cuda as cuda
    import reference.device_ops as device_ops

    for name in ("DeviceOp", "elementwise_chain", "fuse_elementwise", "host_sync_op"):
        assert getattr(cuda, name) is getattr(device_ops, name)
    ops = device_ops.elementwise_chain(4)  # plain Python until called: no CuPy needed
    assert [op.name for op in ops] == ["add", "mul", "tanh", "add"]
    fused = device_ops.fuse_elementwise(ops + [device_ops.host_sync_op] + ops[:2])
    assert len(fused) == 3 and fused[1] is device_ops.host_sync_op and fused[0].cuda_body.count("v =") == 4
