"""A step's snapshot of its object (lab.yaml: snapshot): taken by the worker by the lab's declared
fields, and read back by the grader by those alone, bounded and validated (grader/snapshots.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from grader import framing, observations, snapshots
from grader.framing import ProtocolError
from grader.lab import activate, active, load_lab
from grader.observe.interpreter import observe_in_process
from grader.spec_model import ArrayValue, OpSpec, OpsValue, Step

ROOT = Path(__file__).resolve().parents[1]
ENTRY = {"key": "k", "entry_id": 5, "static_input_id": 1, "static_input_address": 2, "static_input": None}
ENTRY |= {"shape": [2], "num_ops": 3, "output": None}


def _reference():
    spec = importlib.util.spec_from_file_location("_snapshot_reference", ROOT / "reference" / "cudagraph.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_worker_takes_each_entry_by_the_declared_fields():
    chain = (OpSpec("relu"), OpSpec("add", 1.5))
    x = ArrayValue("float32", (4, 8), seed=1)
    steps = (
        Step(0, "build", "GraphRunner", name="runner", args=(OpsValue(chain),)),
        Step(1, "call", "runner", name="out", args=(x,), observe_graphs=True),
        Step(2, "call", "runner", name="again", args=(x,)),  # not observed: no snapshot
    )
    obs = observe_in_process(_reference(), "s/c", steps)
    (entry,) = obs.steps[1].graphs
    assert obs.steps[2].graphs is None
    assert entry.key == "(4, 8)" and entry.shape == (4, 8) and entry.num_ops == 2 and entry.entry_id > 0
    assert entry.static_input.dtype == np.float32 and entry.static_input.shape == (4, 8)
    assert entry.static_input_id > 0 and entry.static_input_address > 0
    np.testing.assert_array_equal(entry.output, obs.steps[1].value)
    assert [name for name, _ in entry.fields] == [
        "static_input_id",
        "static_input_address",
        "static_input",
        "shape",
        "num_ops",
        "output",
    ]
    with pytest.raises(AttributeError):
        entry.graphs  # noqa: B018 - only the declared fields are attributes


def _decode(graphs, blobs=()):
    record = framing.StepRecord(0, outcome="returned")
    record.graphs = graphs
    body, _ = framing.split_frame(framing.observation_frame("s/c", [record.wire()], list(blobs)))
    return observations.decode_observations(body, "s/c", 1).steps[0].graphs


@pytest.mark.parametrize(
    "graphs, problem",
    [
        ([{**ENTRY, "pickle": 1}], "expected an object with keys from"),
        ([{k: v for k, v in ENTRY.items() if k != "static_input_id"}], "static_input_id"),
        ([{**ENTRY, "shape": [-1]}], "shape"),
        ([{**ENTRY, "num_ops": True}], "num_ops"),
        ([{**ENTRY, "key": 3}], "key"),
        ([ENTRY] * (snapshots.MAX_GRAPHS + 1), "graphs"),
        ({"k": ENTRY}, "graphs"),
    ],
)
def test_an_entry_outside_the_declaration_or_its_bounds_is_refused(graphs, problem):
    assert _decode([ENTRY])[0].num_ops == 3
    with pytest.raises(ProtocolError) as caught:
        _decode(graphs)
    assert problem in str(caught.value)


def test_a_lab_without_a_snapshot_takes_and_reads_none():
    before = active()
    try:
        decode = activate(load_lab(ROOT / "labs" / "decode_step"))
        assert decode.snapshot is None
        with pytest.raises(ProtocolError, match="declares no snapshot"):
            _decode([ENTRY])
        assert _decode(None) is None
    finally:
        activate(before)
