"""Issue 33: the notebook answers' cited lines, judged against a trace of the student's own code.

The reference and three solutions written apart from it (tests/support/answer_solutions: a
dict-subclass cache with a slice-assignment copy and two statements on one line; a runner in a
sibling module with a dataclass key and a copy helper, padded; the handout's mini_vllm/ layout
with a dataclass entry and a try/except lookup) are graded on the shipped answers spec through
the real runner: right citations pass, a wrong one costs its slot alone and says what the line
did, the notebook form judges as answers.md does, and no answers lose only those points.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import nbformat
import pytest

from grader.judging.answers import read_answers
from grader.judging.judge import judge_case
from grader.run.runner import RunSettings, ScratchArea, Zygote, case_messages, run_submission
from grader.spec.answer_slots import where_to_write
from tests.support.answer_lines import accepted_lines, answer_cases
from tests.support.shipped import shipped_suite

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "tests" / "support" / "answer_solutions"
SUBMISSIONS = {
    "reference": ROOT / "reference",
    "slice_copy": SOLUTIONS / "slice_copy",
    "sibling": SOLUTIONS / "sibling",
    "package": SOLUTIONS / "package",
}
# The lines the trace accepts, per solution and slot (the closing note of issue 33 lists them).
ACCEPTED = {
    "reference": {
        "constraint-1": [128, 131, 132, 136, 142, 145, 151, 153, 169],
        "constraint-2": [174, 186, 189],
        "win": [133, 178],
    },
    "slice_copy": {
        "constraint-1": [48, 66, 68, 71, 72, 73, 95],
        "constraint-2": [76, 78],
        "win": [83],
    },
    "sibling": {
        "constraint-1": [66, 67, 69, 74, 77, 78, 85, 87],
        "constraint-2": [46, 48, 88],
        "win": [92],
    },
    "package": {
        "constraint-1": [34, 35, 40, 42, 45, 47, 49, 73],
        "constraint-2": [51, 53],
        "win": [58],
    },
}
FILE = {"reference": "cudagraph.py", "slice_copy": "cudagraph.py", "sibling": "graph_runner.py"}
FILE["package"] = "mini_vllm/cudagraph.py"
CASES = answer_cases()
LOADED = shipped_suite()


@pytest.fixture(scope="module")
def zygote():
    with Zygote() as z:
        yield z


def grade_answers(zygote, submission: Path, cases=None) -> dict[str, object]:
    """Each slot's verdict: the answers cases run by the real runner, judged with the answers read
    from the submission folder."""
    cases = cases or CASES
    area = ScratchArea()
    try:
        ordered = tuple(cases.values())
        run = run_submission(zygote, area, 0, submission, ordered, RunSettings(), case_messages(ordered))
    finally:
        area.close()
    answers = read_answers(submission)
    by_uid = {c.uid: c for c in run.cases}
    return {
        slot: judge_case(case, LOADED.oracles[case.uid], by_uid[case.uid].observation, answers)
        for slot, case in cases.items()
    }


def with_answers(tmp_path: Path, name: str, text: str, filename: str = "answers.md") -> Path:
    """A copy of a solution whose answers are ``text``."""
    dest = tmp_path / name
    shutil.copytree(SUBMISSIONS[name], dest, ignore=shutil.ignore_patterns("answers.md", "__pycache__", "mutants"))
    (dest / filename).write_text(text)
    return dest


# ---------------------------------------------------------------- right citations
@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_the_trace_accepts_exactly_the_recorded_lines(name):
    got = accepted_lines(SUBMISSIONS[name])
    assert got == {slot: [f"{FILE[name]}:{n}" for n in lines] for slot, lines in ACCEPTED[name].items()}


@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_the_shipped_answers_score_every_slot(zygote, name):
    verdicts = grade_answers(zygote, SUBMISSIONS[name])
    assert {slot: v.status for slot, v in verdicts.items()} == dict.fromkeys(verdicts, "passed"), {
        s: v.message for s, v in verdicts.items()
    }


def test_every_accepted_line_is_right_when_cited_and_ranges_and_lists_work(zygote, tmp_path):
    """Every line the trace accepts, cited (as a list, a range where they are adjacent, with the
    file or as bare numbers) passes: the judge and the record agree."""
    lines = ACCEPTED["slice_copy"]
    text = (
        f"constraint-1: {', '.join(str(n) for n in lines['constraint-1'])}\n"
        "constraint-2: cudagraph.py:76, 78\n"
        "win: cudagraph.py:83-83\n"
    )
    verdicts = grade_answers(zygote, with_answers(tmp_path, "slice_copy", text))
    assert all(v.status == "passed" for v in verdicts.values()), {s: v.message for s, v in verdicts.items()}


# ---------------------------------------------------------------- wrong citations
def test_a_wrong_citation_costs_its_slot_alone_and_says_what_the_line_does(zygote, tmp_path):
    text = "constraint-1: cudagraph.py:131\nconstraint-2: cudagraph.py:167\nwin: cudagraph.py:178\n"
    verdicts = grade_answers(zygote, with_answers(tmp_path, "reference", text))
    assert verdicts["constraint-1"].status == verdicts["win"].status == "passed"
    message = verdicts["constraint-2"].message
    assert verdicts["constraint-2"].status == "failed"
    assert "line 167 runs only during capture" in message
    assert "The right line is in GraphRunner._load" in message
    assert "186" not in message and "174" not in message  # the right line is not given away


@pytest.mark.parametrize(
    ("slot", "line", "said"),
    [
        ("win", 64, "line 64 bumps the counter during capture, not replay"),
        ("win", 177, "line 177 runs during the replay but no launch is counted while it runs"),
        ("constraint-2", 176, "the new input does not land in the captured static buffer there"),
        ("constraint-1", 127, "neither computes the shape key"),
        ("constraint-1", 126, "line 126 is a def line"),
        ("win", 139, "line 139 is part of a docstring"),
        ("constraint-2", 50, "line 50 is blank"),
        ("win", 53, "line 53 did not run while the grader captured and replayed a graph"),
    ],
)
def test_each_kind_of_wrong_line_is_named(zygote, tmp_path, slot, line, said):
    right = {"constraint-1": 131, "constraint-2": 174, "win": 178}
    right[slot] = line
    text = "".join(f"{s}: cudagraph.py:{n}\n" for s, n in right.items())
    verdicts = grade_answers(zygote, with_answers(tmp_path, "reference", text))
    assert verdicts[slot].status == "failed" and said in verdicts[slot].message, verdicts[slot].message
    assert all(v.status == "passed" for s, v in verdicts.items() if s != slot)


def test_a_comment_is_never_right(tmp_path):
    sub = with_answers(tmp_path, "slice_copy", "win: cudagraph.py:2\n")
    (sub / "cudagraph.py").write_text("import numpy as np\n# LaunchCounter.bump(1)\n")
    answers = read_answers(sub)
    assert answers.files["cudagraph.py"].kinds[2] == "a comment"


def test_reveal_names_the_right_line(zygote, tmp_path):
    case = CASES["constraint-2"]
    revealing = dataclasses.replace(case, checks=(dataclasses.replace(case.checks[0], reveal=True),))
    text = "constraint-2: cudagraph.py:167\n"
    verdict = grade_answers(zygote, with_answers(tmp_path, "reference", text), {"constraint-2": revealing})
    assert "(cudagraph.py:186)" in verdict["constraint-2"].message


# ---------------------------------------------------------------- bad input, no answers, layouts
@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("constraint-1: cudagraph.py:<line>\n", "'constraint-1:' has no line number yet"),
        ("constraint-1: cudagraph.py:9999\n", "line 9999 is past the end of cudagraph.py"),
        ("constraint-1: ../../etc/passwd.py:3\n", "is not a file of your submission"),
        ("constraint-1: numpy.py:3\n", "numpy.py is not a file of your submission"),
        ("constraint-2: cudagraph.py:186\n", "has no 'constraint-1:' line"),
        ("constraint-1: the lookup\n", "is not a citation"),
    ],
)
def test_bad_input_is_one_line_for_its_slot(text, said, tmp_path):
    answers = read_answers(with_answers(tmp_path, "reference", text))
    problem = answers.slot("constraint-1").problem
    assert said in problem and "\n" not in problem


def test_two_notebooks_are_one_message_for_every_slot(tmp_path):
    sub = with_answers(tmp_path, "package", "", "a.ipynb")
    (sub / "answers.md").unlink(missing_ok=True)
    (sub / "b.ipynb").write_text("{}")
    answers = read_answers(sub)
    assert "two notebooks (a.ipynb, b.ipynb)" in answers.slot("win").problem


def test_no_answers_lose_only_those_points_and_say_where_to_write(zygote, tmp_path):
    sub = tmp_path / "none"
    shutil.copytree(SOLUTIONS / "slice_copy", sub, ignore=shutil.ignore_patterns("answers.md"))
    verdicts = grade_answers(zygote, sub)
    for verdict in verdicts.values():
        assert verdict.status == "failed" and where_to_write() in verdict.message


def test_the_notebook_form_judges_as_answers_md(zygote, tmp_path):
    """The package solution's answers.md, moved into a notebook's markdown and raw cells (with a
    code cell that would fail if it ran), gives the same verdicts."""
    markdown = (SOLUTIONS / "package" / "answers.md").read_text()
    notebook = nbformat.v4.new_notebook()
    half = markdown.splitlines()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("\n".join(half[:5])),
        nbformat.v4.new_code_cell("raise SystemExit('a notebook is never run')"),
        nbformat.v4.new_raw_cell("\n".join(half[5:])),
    ]
    sub = with_answers(tmp_path, "package", nbformat.writes(notebook), "homework.ipynb")
    as_notebook = grade_answers(zygote, sub)
    as_markdown = grade_answers(zygote, SOLUTIONS / "package")
    assert {s: (v.status, v.message) for s, v in as_notebook.items()} == {
        s: (v.status, v.message) for s, v in as_markdown.items()
    }
    assert read_answers(sub).source == "homework.ipynb"


def test_the_handout_layout_grades_as_the_flat_one(zygote, tmp_path):
    """The reference moved to mini_vllm/cudagraph.py: citing mini_vllm/cudagraph.py:N, cudagraph.py:N
    or a bare N is judged as the flat layout's cudagraph.py:N."""
    sub = tmp_path / "handout"
    (sub / "mini_vllm").mkdir(parents=True)
    shutil.copy(ROOT / "reference" / "cudagraph.py", sub / "mini_vllm" / "cudagraph.py")
    (sub / "answers.md").write_text(
        "constraint-1: mini_vllm/cudagraph.py:131\nconstraint-2: 174\nwin: cudagraph.py:178\n"
    )
    assert {s: v.status for s, v in grade_answers(zygote, sub).items()} == dict.fromkeys(CASES, "passed")


def test_a_probe_that_cannot_run_costs_each_slot_alone(zygote, tmp_path):
    sub = with_answers(tmp_path, "slice_copy", (SOLUTIONS / "slice_copy" / "answers.md").read_text())
    source = (sub / "cudagraph.py").read_text()
    (sub / "cudagraph.py").write_text(
        source.replace("        x = np.asarray(x)\n", "        raise RuntimeError('not yet')\n", 1)
    )
    verdicts = grade_answers(zygote, sub)
    for verdict in verdicts.values():
        assert verdict.status == "failed"
        assert (
            "could not capture and replay your GraphRunner (it raised RuntimeError: not yet), so this check could not be made"
            in verdict.message
        )


def test_a_hidden_answers_case_reaches_the_answers_lines_as_one_bit(tmp_path):
    """A hidden case of a slot's name shows as passed or not passed, never its status (timeout,
    crashed, error); and a visible case of that name keeps its own."""
    from grader.judging.results import CaseResult
    from grader.lab import active
    from grader.spec.answer_slots import cited_slots

    slot, other = cited_slots()[:2]
    answers = read_answers(with_answers(tmp_path, "reference", f"{slot}: 1\n{other}: 2\n"))
    tag = next(b.id for b in active().behaviours if b.part == "answers")

    def case(name: str, status: str, redacted: bool) -> CaseResult:
        return CaseResult("s", name, tag, status, 0.0, 1.0, "", redacted=redacted)

    lines = {
        a.slot: a.verdict for a in answers.report_lines((case(slot, "timeout", True), case(other, "passed", True)))
    }
    assert lines[slot] == "not passed" and lines[other] == "passed"
    shown = {a.slot: a.verdict for a in answers.report_lines((case(slot, "passed", True), case(slot, "error", False)))}
    assert shown[slot] == "error"  # the visible case's own status, whichever comes first
