"""Step kinds in one registry (grader/step_kinds.py): a kind declares its parsing, its running in
the worker and its wording in one class, and a lab's pack adds a kind of its own through the same
registry (lab.yaml: steps), which the loader, the schema, the interpreter, the judge and repro
then know as they know the engine's.

The pack kind here, ``forget: ATTR, of: NAME`` (``del NAME.ATTR``), lives in a copy of the
decode-step lab; the engine has no such kind.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from grader.commands import repro
from grader.judging.judge import judge_case
from grader.lab import LabError, activate, active, load_lab
from grader.lab.reference import load_reference
from grader.observe.interpreter import observe_in_process
from grader.step_kinds import STEP_KINDS, StepKind, lab_step_kinds, step_actions, step_kind
from grader.suite.loader import load_suite
from grader.suite.schema import build_schema

DECODE_STEP = Path(__file__).resolve().parents[1] / "labs" / "decode_step"

FORGET = '''\
from grader.step_kinds import StepKind


class Forget(StepKind):
    """``forget: ATTR, of: NAME``: delete an attribute of a built object."""

    action, forbidden, description = "forget", ("args", "kwargs", "value", "fill"), "delete an attribute"

    @classmethod
    def parse_target(cls, draft, fields, node, where, step):
        step.target = draft.reader.ident(fields["forget"][1], f"{where}.forget")
        step.on = cls.need_on(draft, fields, node, where, "forget")

    @classmethod
    def properties(cls, common, ident):
        return {"forget": {"type": "string"}, "of": ident("a built object"), "as": common["as"]}, ("forget", "of")

    @classmethod
    def run(cls, interp, step, args, kwargs):
        delattr(interp.target_object(step.on), step.target)

    @classmethod
    def callee(cls, step):
        return step.on

    @classmethod
    def label(cls, step, args, bind):
        return f"del {step.on}.{step.target}"

    @classmethod
    def repro_statement(cls, w, step, given):
        return f"del {w.target(step.on)}.{step.target}", "None"
'''

SPEC = """\
format: 1
specs:
  - id: forgotten
    title: A frozen config's setting cannot be deleted
    tag: decode-config
    points: 1
    visibility: visible
    explanation: Explains.
    hint: Hints.
    cases:
      - id: forget-enable
        description: DecodeConfig is a frozen dataclass - deleting a field raises.
        steps:
          - build: DecodeConfig
            as: cfg
            kwargs: {enable_decode_graphs: true}
          - forget: enable_decode_graphs
            of: cfg
            as: gone
        checks:
          - raises: {step: gone, type: FrozenInstanceError}
"""


@pytest.fixture
def pack_lab(tmp_path):
    """A copy of the decode-step lab whose pack adds the forget step kind, active for the test."""
    folder = tmp_path / "lab"
    shutil.copytree(DECODE_STEP, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "pack" / "steps.py").write_text(FORGET, encoding="utf-8")
    text = (folder / "lab.yaml").read_text(encoding="utf-8").replace("id: decode-step", "id: decode-step-forget")
    (folder / "lab.yaml").write_text(text + "\nsteps: [pack.steps:Forget]\n", encoding="utf-8")
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "01_forget.yaml").write_text(SPEC, encoding="utf-8")
    before = active()
    activate(load_lab(folder))
    yield specs
    activate(before)


def test_the_engines_kinds_are_one_class_each_with_every_facet():
    assert step_actions() == tuple(STEP_KINDS) == ("build", "call", "method", "read", "set", "mutate", "probe")
    for action, kind in STEP_KINDS.items():
        assert step_kind(action) is kind and kind.action == action
        for facet in ("parse_target", "properties", "run", "label"):
            owner = next(c for c in kind.__mro__ if facet in vars(c))
            assert owner is not StepKind, (action, facet)  # no kind leans on the base for these
    # what the worker traces, what the judge and the report read: each said by its kind
    traced = {a for a, k in STEP_KINDS.items() if k.tracing(_step(a)) is not None}
    assert traced == {"build", "method", "read", "set"}
    assert {a for a, k in STEP_KINDS.items() if k.pictures_launches} == {"call", "method"}
    assert {a for a, k in STEP_KINDS.items() if k.calls_target} == {"build", "call"}


def test_a_call_is_traced_only_when_a_check_follows_its_values():
    from dataclasses import replace

    call = STEP_KINDS["call"]
    assert call.tracing(_step("call")) is None
    assert call.tracing(replace(_step("call"), observe_graphs=True)) == {"fields": True}
    assert call.tracing(replace(_step("call"), follow_values=True)) == {"fields": True}


def test_a_pack_kind_is_parsed_run_judged_worded_and_reproduced_as_the_engines_are(pack_lab):
    assert step_actions()[-1] == "forget" and step_kind("forget").__module__.startswith("_graphgrade_pack_")
    alternatives = build_schema()["$defs"]["step"]["oneOf"]
    assert alternatives[-1]["required"] == ["forget", "of"]
    loaded = load_suite(pack_lab)
    (spec,) = loaded.suite.specs
    (case,) = spec.cases
    assert [s.action for s in case.steps] == ["build", "forget"]
    assert case.steps[1].label == "del cfg.enable_decode_graphs"
    reference = load_reference(active())
    observation = observe_in_process(reference.module, case.uid, case.steps)  # the interpreter runs it
    assert [o.outcome for o in observation.steps] == ["returned", "raised"]
    verdict = judge_case(case, loaded.oracles[case.uid], observation)
    assert verdict.status == "passed", verdict.message
    script = repro.script(spec, case, loaded.oracles[case.uid], None)
    assert "    del cfg.enable_decode_graphs\n" in script and "# step 2: del cfg.enable_decode_graphs" in script


def test_a_pack_kind_has_only_its_own_keys(pack_lab):
    bad = SPEC.replace("            as: gone\n", "            as: gone\n            fill: 1\n")
    (pack_lab / "01_forget.yaml").write_text(bad, encoding="utf-8")
    from grader.suite.loader import SpecErrors

    with pytest.raises(SpecErrors) as caught:
        load_suite(pack_lab)
    (error,) = caught.value.errors
    assert "01_forget.yaml:" in str(error) and "not allowed in a forget step" in str(error)


@pytest.mark.parametrize(
    "module, problem",
    [
        ("class Forget:\n    action = 'forget'\n", "not a step kind"),
        ("from grader.step_kinds import Read\n\nclass Forget(Read):\n    pass\n", "not a step kind"),
        (
            "from grader.step_kinds import Read\n\nclass Forget(Read):\n    action = 'read'\n",
            "a step kind named 'read' is already there",
        ),
    ],
)
def test_a_wrong_pack_kind_is_one_line_naming_the_lab_file_and_the_entry(tmp_path, module, problem):
    folder = tmp_path / "lab"
    (folder / "pack").mkdir(parents=True)
    (folder / "pack" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "pack" / "steps.py").write_text(textwrap.dedent(module), encoding="utf-8")
    (folder / "lab.yaml").write_text(
        f"format: 1\nid: bad-steps-{abs(hash(module)) % 10**8}\ntitle: t\nstudent: {{module: m}}\n"
        "behaviours: [{id: a, title: A, part: core}]\nspecs: s\nreference: r\npack: pack\nsteps: [pack.steps:Forget]\n",
        encoding="utf-8",
    )
    with pytest.raises(LabError) as error:
        lab_step_kinds(load_lab(folder))
    message = str(error.value)
    assert message.startswith(f"{folder / 'lab.yaml'}: steps[0]: pack.steps:Forget: ") and problem in message
    assert "\n" not in message


def _step(action: str):
    from grader.spec_model import Step

    return Step(0, action, "x", on="y")


def test_the_workers_run_a_pack_kind_after_they_are_confined(pack_lab):
    """Graded through the sandboxed workers: each imports the pack's step kinds before it is
    confined (grader.lab.loading.preload_pack), so the forget step runs there as in process."""
    import json

    from test_labs import _graphgrade

    lab, out = pack_lab.parent / "lab", pack_lab.parent / "out"
    submission = pack_lab.parent / "ref"
    submission.mkdir()
    shutil.copy(lab / "reference" / "decode_step.py", submission / "decode_step.py")
    done = _graphgrade(
        "grade", str(submission), "--lab", str(lab), "--specs", str(pack_lab), "--out", str(out), "--no-cache"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "ref" / "report.json").read_text(encoding="utf-8"))
    (case,) = report["cases"]
    assert report["score"] == report["max_score"] == 1 and case["status"] == "passed", json.dumps(report)[:2000]
    assert case["steps"][1] == {
        "index": 1,
        "action": "del cfg.enable_decode_graphs",
        "outcome": "raised FrozenInstanceError: cannot delete field 'enable_decode_graphs'",
    }
