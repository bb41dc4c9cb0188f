"""The wire format between the grader and its workers (grader.observations), on hand-made bytes.

Observation frames are built here by hand, not by the encoder under test, and the decoder must
refuse every malformed one with a ProtocolError; arrays come back as plain ndarrays of exactly
their dtype and shape; a case message carries a case's steps and none of its checks.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from grader import framing, observations
from grader.observations import EnumValue, OpaqueValue, ProtocolError


# ------------------------------------------------------------------ observation frames
def frame_body(header: dict | bytes, blobs: list[bytes] = (), magic: bytes = framing.MAGIC) -> bytes:
    """An observation frame body built by hand (not by the encoder under test)."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    parts = [magic, struct.pack("<II", len(raw), len(blobs)), raw]
    for blob in blobs:
        parts += [struct.pack("<Q", len(blob)), blob]
    return b"".join(parts)


def step_record(index: int = 0, **fields) -> dict:
    record = {
        "index": index,
        "outcome": "returned",
        "value": None,
        "error": None,
        "launches": 1,
        "witness": [],
        "input_address": None,
        "graphs": None,
        "note": "",
    }
    record.update(fields)
    return record


ARRAY = np.arange(6, dtype=np.float32).reshape(2, 3)


def good_header(**step_fields) -> dict:
    value = {"ndarray": {"dtype": "float32", "shape": [2, 3], "blob": 0}}
    return {
        "protocol": observations.OBSERVATION_VERSION,
        "case": "s/c",
        "steps": [step_record(value=value, **step_fields)],
    }


def test_a_well_formed_frame_decodes():
    obs = observations.decode_observations(frame_body(good_header(), [ARRAY.tobytes()]), "s/c", 1)
    assert obs.case == "s/c"
    (step,) = obs.steps
    assert step.outcome == "returned" and step.launches == 1
    assert np.array_equal(step.value, ARRAY)


@pytest.mark.parametrize(
    "name, body, expected_case, steps",
    [
        ("bad magic", frame_body(good_header(), [ARRAY.tobytes()], magic=b"PK\x03\x04"), "s/c", 1),
        ("short", framing.MAGIC + b"\x00", "s/c", 1),
        ("wrong case id", frame_body(good_header(), [ARRAY.tobytes()]), "s/other", 1),
        ("blob size mismatch", frame_body(good_header(), [ARRAY.tobytes()[:20]]), "s/c", 1),
        ("blob index out of range", frame_body(good_header(), []), "s/c", 1),
        (
            "unknown dtype",
            frame_body(
                {
                    **good_header(),
                    "steps": [step_record(value={"ndarray": {"dtype": "object", "shape": [2, 3], "blob": 0}})],
                },
                [ARRAY.tobytes()],
            ),
            "s/c",
            1,
        ),
        ("extra top-level key", frame_body({**good_header(), "pickle": "x"}, [ARRAY.tobytes()]), "s/c", 1),
        ("extra step key", frame_body(good_header(verdict="passed"), [ARRAY.tobytes()]), "s/c", 1),
        (
            "extra array key",
            frame_body(
                {
                    **good_header(),
                    "steps": [
                        step_record(value={"ndarray": {"dtype": "float32", "shape": [2, 3], "blob": 0, "order": "F"}})
                    ],
                },
                [ARRAY.tobytes()],
            ),
            "s/c",
            1,
        ),
        (
            "too many steps",
            frame_body({**good_header(), "steps": good_header()["steps"] + [step_record(1)]}, [ARRAY.tobytes()]),
            "s/c",
            1,
        ),
        ("too few steps", frame_body(good_header(), [ARRAY.tobytes()]), "s/c", 2),
        ("trailing bytes", frame_body(good_header(), [ARRAY.tobytes()]) + b"\x00", "s/c", 1),
        ("header not JSON", frame_body(b"{not json", []), "s/c", 1),
        ("wrong protocol", frame_body({**good_header(), "protocol": 99}, [ARRAY.tobytes()]), "s/c", 1),
        ("unknown outcome", frame_body(good_header(outcome="passed"), [ARRAY.tobytes()]), "s/c", 1),
        (
            "unknown value tag",
            frame_body({**good_header(), "steps": [step_record(value={"pickle": "gASV"})]}),
            "s/c",
            1,
        ),
        (
            "NaN outside its tag",
            frame_body(b'{"protocol": 1, "case": "s/c", "steps": [{"index": 0, "outcome": "returned", "value": NaN}]}'),
            "s/c",
            1,
        ),
        (
            "steps out of order",
            frame_body({"protocol": 1, "case": "s/c", "steps": [step_record(1), step_record(0)]}),
            "s/c",
            2,
        ),
        (
            "blob used twice",
            frame_body(
                {
                    "protocol": 1,
                    "case": "s/c",
                    "steps": [
                        step_record(value={"list": [{"ndarray": {"dtype": "float32", "shape": [2, 3], "blob": 0}}] * 2})
                    ],
                },
                [ARRAY.tobytes()],
            ),
            "s/c",
            1,
        ),
        ("launches not an integer", frame_body(good_header(launches=True), [ARRAY.tobytes()]), "s/c", 1),
        ("launches past report.json's integers", frame_body(good_header(launches=2**63), [ARRAY.tobytes()]), "s/c", 1),
        ("witness entry malformed", frame_body(good_header(witness=[[0, 0, 1]]), [ARRAY.tobytes()]), "s/c", 1),
        (
            "graph entry extra key",
            frame_body(
                good_header(
                    graphs=[
                        {
                            "key": "k",
                            "shape": None,
                            "entry_id": 1,
                            "static_input_id": 1,
                            "static_input_address": 2,
                            "static_input": None,
                            "num_ops": 1,
                            "x": 1,
                        }
                    ]
                ),
                [ARRAY.tobytes()],
            ),
            "s/c",
            1,
        ),
        ("text too long", frame_body(good_header(note="x" * (observations.MAX_TEXT + 1)), [ARRAY.tobytes()]), "s/c", 1),
        ("blob count over the frame", framing.MAGIC + struct.pack("<II", 2, 3) + b"{}", "s/c", 1),
    ],
)
def test_decode_rejects_malformed_frames(name, body, expected_case, steps):
    with pytest.raises(ProtocolError):
        observations.decode_observations(body, expected_case, steps)


@pytest.mark.parametrize(
    "dtype, shape", [("float32", (4, 8)), ("float64", (3,)), ("int64", (2, 2, 2)), ("bool", (5,)), ("float32", (0, 3))]
)
def test_an_ndarray_blob_decodes_to_a_plain_array_of_exactly_its_dtype_and_shape(dtype, shape):
    class Sneaky(np.ndarray):
        def __eq__(self, other):  # a submission's array that claims equality with anything
            return True

    original = (np.arange(int(np.prod(shape))) % 3).astype(dtype).reshape(shape)
    encoder = observations.new_encoder()
    value = encoder.value(original.view(Sneaky))
    frame = observations.encode_observations("s/c", [step_record(value=value)], encoder.blobs)
    body, rest = framing.split_frame(frame)
    assert rest == b""
    (step,) = observations.decode_observations(body, "s/c", 1).steps
    decoded = step.value
    assert type(decoded) is np.ndarray
    assert decoded.dtype == np.dtype(dtype) and decoded.shape == shape
    assert decoded.flags.owndata and decoded.flags.writeable and decoded.flags.c_contiguous
    assert np.array_equal(decoded, original)


def test_other_values_decode_to_plain_data():
    encoder = observations.new_encoder()
    import enum

    class StepMode(enum.Enum):
        CAPTURE = 1

    record = step_record(value=encoder.value([1, 2.5, "x", None, True, StepMode.CAPTURE, object()]))
    body, _ = framing.split_frame(observations.encode_observations("s/c", [record], encoder.blobs))
    (step,) = observations.decode_observations(body, "s/c", 1).steps
    assert step.value == (1, 2.5, "x", None, True, EnumValue("StepMode", "CAPTURE"), OpaqueValue("object"))


def test_byte_swapped_array_travels_as_its_values():
    encoder = observations.new_encoder()
    encoded = encoder.value(np.arange(3, dtype=">f4"))
    assert encoded["ndarray"]["dtype"] == "float32"
    body, _ = framing.split_frame(observations.encode_observations("s/c", [step_record(value=encoded)], encoder.blobs))
    (step,) = observations.decode_observations(body, "s/c", 1).steps
    decoded = step.value
    assert decoded.dtype == np.float32 and decoded.tolist() == [0.0, 1.0, 2.0]


def test_a_blob_no_value_uses_is_refused_not_held():
    """Issue 25, point 5: a frame's unused bytes are refused: an 8 MiB blob that no array
    refers to makes the frame malformed (an error for that case), instead of riding along to
    judging."""
    from grader import framing

    steps = [{"index": 0, "outcome": "returned", "value": 0, "error": None, "launches": 1, "witness": [],
              "input_address": None, "graphs": None, "note": ""}]  # fmt: skip
    body = framing.observation_frame("c", steps, [b"\0" * (8 << 20)])[framing.PREFIX_BYTES :]
    with pytest.raises(ProtocolError, match="used by no value"):
        observations.decode_observations(body, "c", 1)
    plain = framing.observation_frame("c", steps, [])[framing.PREFIX_BYTES :]
    assert observations.decode_observations(plain, "c", 1).steps[0].value == 0
