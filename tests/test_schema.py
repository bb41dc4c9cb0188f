"""specs/schema.json: generated from the loader's vocabulary, valid, and in agreement with the loader."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from support.lab_ops import ops

from grader.lab import active as active_lab
from grader.spec_model import VISIBILITIES
from grader.step_kinds import step_actions
from grader.suite.checks import lab_check_kinds
from grader.suite.loader import load_spec_text, spec_files
from grader.suite.schema import build_schema

TAGS = active_lab().tags


ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
SCHEMA_FILE = SPECS / "schema.json"
SHIPPED = spec_files(SPECS)

SMALL = """\
format: 1
specs:
  - id: small
    title: Small
    tag: eager
    points: 1
    visibility: visible
    explanation: E.
    hint: H.
    cases:
      - id: one
        description: One call.
        steps:
          - call: run_eager
            as: out
            args: [{ops: [relu, {add: 1.5}]}, {array: {shape: [2, 3], seed: 1}}]
        checks:
          - launches: {step: out, equals: 2}
          - output: {step: out, oracle: true}
"""


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator(schema):
    return jsonschema.Draft202012Validator(schema)


def test_committed_schema_is_the_generated_one(schema):
    assert schema == build_schema(), "specs/schema.json is stale: run `graphgrade schema > specs/schema.json`"


def test_graphgrade_schema_prints_the_same_json():
    exe = shutil.which("graphgrade")
    cmd = [exe] if exe else [sys.executable, "-m", "grader.commands.cli"]
    result = subprocess.run([*cmd, "schema"], check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == build_schema()
    assert result.stdout == SCHEMA_FILE.read_text(encoding="utf-8"), "run `graphgrade schema > specs/schema.json`"


def test_schema_is_a_valid_draft_2020_12_schema(schema):
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_schema_lists_the_loaders_vocabulary(schema):
    defs = schema["$defs"]
    assert defs["spec"]["properties"]["tag"]["enum"] == list(TAGS)
    assert defs["spec"]["properties"]["visibility"]["enum"] == list(VISIBILITIES)
    assert [next(iter(alt["properties"])) for alt in defs["check"]["oneOf"]] == list(lab_check_kinds())
    assert [alt["required"][0] for alt in defs["step"]["oneOf"]] == list(step_actions())
    plain_ops, *with_arg = defs["op"]["oneOf"]
    named = set(plain_ops["enum"]) | {next(iter(alt["properties"])) for alt in with_arg}
    assert named == set(ops.OP_KINDS)


def test_small_document_is_valid_for_both_schema_and_loader(validator):
    assert list(validator.iter_errors(yaml.safe_load(SMALL))) == []
    load_spec_text(SMALL, "small.yaml")


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_spec_file_validates_against_the_schema(validator, path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=./schema.json\n"), "editors find the schema from this line"
    errors = sorted(validator.iter_errors(yaml.safe_load(text)), key=lambda e: list(e.absolute_path))
    assert not errors, f"{path.name}: " + "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def _broken(mutate) -> dict:
    document = copy.deepcopy(yaml.safe_load(SMALL))
    mutate(document)
    return document


BROKEN = {
    "unknown spec key": lambda d: d["specs"][0].update(colour="red"),
    "unknown top-level key": lambda d: d.update(extra=1),
    "unknown op": lambda d: d["specs"][0]["cases"][0]["steps"][0]["args"][0]["ops"].append("gelu"),
    "op missing its argument": lambda d: d["specs"][0]["cases"][0]["steps"][0]["args"][0]["ops"].append("add"),
    "unknown tag": lambda d: d["specs"][0].update(tag="eagre"),
    "unknown visibility": lambda d: d["specs"][0].update(visibility="secret"),
    "unknown check kind": lambda d: d["specs"][0]["cases"][0]["checks"].append(
        {"launchez": {"step": "out", "equals": 1}}
    ),
    "points as text": lambda d: d["specs"][0].update(points="ten"),
    "format 2": lambda d: d.update(format=2),
    "missing hint": lambda d: d["specs"][0].pop("hint"),
    "unknown kwarg": lambda d: d["specs"][0]["cases"][0]["steps"][0].update(kwargs={"colour": 1}),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_documents_are_rejected_by_the_schema(validator, name):
    document = _broken(BROKEN[name])
    assert list(validator.iter_errors(document)), f"the schema accepted a document with {name}"
