"""The validation toolkit (grader.validation): each typed reader accepts what it should, refuses
the rest with one Invalid that names where and what; each check decides once and words its
refusal in the wording it is given (terse, naming the type, or a spec file's); and each boundary
(worker frames, report.json, spec files) raises its own kind of Invalid, location included."""

from __future__ import annotations

import json
import math

import pytest
import yaml

from grader import framing, observations, validation
from grader.framing import ProtocolError
from grader.judging.report_reading import ReportError, report_from_json
from grader.suite.spec_reading import SPEC_WORDING, SpecError
from grader.validation import TERSE, TYPE_NAMING, Invalid


def refused(call, *args, **kwargs) -> Invalid:
    with pytest.raises(Invalid) as info:
        call(*args, **kwargs)
    assert "\n" not in str(info.value)
    return info.value


def test_an_invalid_value_says_where_and_what():
    err = Invalid("expected an integer", "steps[0].index")
    assert (str(err), err.where, err.problem) == (
        "steps[0].index: expected an integer",
        "steps[0].index",
        "expected an integer",
    )
    assert str(Invalid("not JSON")) == "not JSON" and Invalid("not JSON").where == ""
    assert isinstance(err, ValueError)
    for kind in (ProtocolError, ReportError, SpecError):
        assert issubclass(kind, Invalid)


# ------------------------------------------------------------------ single values
def test_integer():
    assert validation.integer(0, "x") == 0 and validation.integer(-(2**63), "x") == -(2**63)
    assert validation.integer(2**64 - 1, "x") == 2**64 - 1  # an address, signed or not
    assert validation.integer(4, "x", 4, 5) == 4  # lo is inclusive
    for bad in (True, False, 1.0, "1", None, [1], 2**64, -(2**63) - 1):
        err = refused(validation.integer, bad, "a.b")
        assert (err.where, err.problem) == ("a.b", "expected an integer")
    refused(validation.integer, 5, "x", 4, 5)  # hi is exclusive
    refused(validation.integer, 3, "x", 4, 5)


def test_optional_integer():
    assert validation.optional_integer(None, "x") is None and validation.optional_integer(7, "x") == 7
    assert str(refused(validation.optional_integer, "7", "c.step")) == "c.step: expected an integer or null"
    refused(validation.optional_integer, True, "x")
    refused(validation.optional_integer, 10, "x", 0, 10)


def test_text():
    assert validation.text("", "x", 3) == "" and validation.text("abc", "x", 3) == "abc"
    for bad in ("abcd", 1, None, b"ab", ["a"]):
        assert str(refused(validation.text, bad, "note", 3)) == "note: expected text of bounded length"


def test_array_shape():
    assert validation.array_shape([], "s", 10) == ()
    assert validation.array_shape([2, 5], "s", 10) == (2, 5)
    assert validation.array_shape([0, 10], "s", 10) == (0, 10)  # a zero dimension counts as one
    assert str(refused(validation.array_shape, [0, 11], "s", 10)) == "s: a shape of more than 10 elements"
    assert str(refused(validation.array_shape, [1, -1], "s", 10)) == "s[1]: expected an integer"
    assert str(refused(validation.array_shape, [1, True], "s", 10)) == "s[1]: expected an integer"
    assert str(refused(validation.array_shape, [2**31], "s", 2**40)) == "s[0]: expected an integer"
    assert str(refused(validation.array_shape, (2, 3), "s", 10)) == "s: expected a shape"
    assert validation.array_shape([1] * 8, "s", 10) == (1,) * 8
    refused(validation.array_shape, [1] * 9, "s", 10)
    refused(validation.array_shape, [1, 1, 1], "s", 10, max_dims=2)


def test_bounded_list_and_one_of():
    assert validation.bounded_list([1, 2], "w", 2) == [1, 2]
    assert str(refused(validation.bounded_list, [1, 2, 3], "w", 2)) == "w: expected a bounded list"
    refused(validation.bounded_list, (1,), "w", 2)
    assert validation.one_of("a", ("a", "b"), "k") == "a"
    assert str(refused(validation.one_of, "c", ("a", "b"), "r.k")) == "r.k: 'c' is not one of a, b"
    refused(validation.one_of, ["a"], ("a", "b"), "k")


# ------------------------------------------------------------------ objects
def test_keys_within():
    allowed = frozenset({"a", "b"})
    assert validation.keys_within({}, allowed, "o") == {} and validation.keys_within({"a": 1}, allowed, "o") == {"a": 1}
    for bad in ({"c": 1}, {"a": 1, "z": 2}, [("a", 1)], None):
        assert (
            str(refused(validation.keys_within, bad, allowed, "o")) == "o: expected an object with keys from ['a', 'b']"
        )


def test_known_keys():
    assert validation.known_keys({"a": 1}, {"a", "b"}, "o") == {"a": 1}
    assert str(refused(validation.known_keys, {"z": 1, "c": 2}, {"a"}, "o")) == "o: unknown key 'c'"
    assert str(refused(validation.known_keys, [1], {"a"}, "o")) == "o: expected an object, got list"


def test_required_and_optional():
    obj = {"n": 3, "f": 2, "s": "x", "b": True, "big": 2**63, "nan": float("nan"), "huge": 10**400, "long": "xyz"}
    assert validation.required(obj, "n", int, "r", 10) == 3
    got = validation.required(obj, "f", float, "r", 10)
    assert got == 2.0 and type(got) is float  # an int where a float is expected reads as a float
    assert validation.required(obj, "b", bool, "r", 10) is True
    assert validation.required(obj, "s", (str, int), "r", 10) == "x"
    cases = [
        ("missing", int, "r: missing key 'missing'"),
        ("b", int, "r.b: expected int, got bool"),  # a bool is never an int
        ("s", (int, float), "r.s: expected int or float, got str"),
        ("big", int, "r.big: integer out of range"),
        ("nan", float, "r.nan: not a finite number"),
        ("huge", float, "r.huge: not a finite number"),
        ("long", str, "r.long: text longer than 2 characters"),
    ]
    for key, kinds, message in cases:
        assert str(refused(validation.required, obj, key, kinds, "r", 2)) == message
    assert validation.required(obj, "big", int, "r", 2, int_end=2**64) == 2**63
    # the common values' quick path decides as the full one does: bounds, and an int as a float
    edge = {"lo": -(2**63), "below": -(2**63) - 1, "two": "xy", "n": 3}
    assert validation.required(edge, "lo", int, "r", 2) == -(2**63)
    assert str(refused(validation.required, edge, "below", int, "r", 2)) == "r.below: integer out of range"
    assert validation.required(edge, "two", str, "r", 2) == "xy"
    got = validation.required(edge, "n", (int, float), "r", 2)
    assert got == 3.0 and type(got) is float
    assert validation.required({"l": [1]}, "l", list, "r", 2) == [1]
    assert validation.optional(obj, "absent", int, "r", "default", 2) == "default"
    assert validation.optional(obj, "n", int, "r", 0, 2) == 3
    refused(validation.optional, obj, "s", int, "r", 0, 2)


# ------------------------------------------------------------------ one check, each boundary's words
def test_of_kind_decides_the_same_whatever_the_wording():
    assert validation.of_kind(3, (int,), "x", "an integer", TERSE) == 3
    assert validation.of_kind(True, (bool,), "x", "true or false", TERSE) is True
    assert validation.of_kind(2.5, (int, float), "x", "a number", TERSE) == 2.5
    for bad, kinds in ((True, (int,)), (False, (int, float)), (1.0, (int,)), ("1", (int, float)), (None, (str,))):
        for wording in (TERSE, TYPE_NAMING, SPEC_WORDING):
            refused(validation.of_kind, bad, kinds, "x", "it", wording)
    for bad in (float("nan"), float("inf"), -float("inf")):
        refused(validation.of_kind, bad, (float,), "x", "a number", TERSE)


def test_of_kind_words_its_refusal_as_told():
    assert str(refused(validation.of_kind, "3", (int,), "a.b", "an integer", TERSE)) == "a.b: expected an integer"
    assert (
        str(refused(validation.of_kind, "3", (int,), "a.b", "an integer", TYPE_NAMING))
        == "a.b: expected an integer, got str"
    )
    assert (
        str(refused(validation.of_kind, "3", (int,), "a.b", "an integer", SPEC_WORDING))
        == "a.b: expected an integer, got '3'"
    )
    # no ``what``: the kinds' names
    assert (
        str(refused(validation.of_kind, [], (int, float), "k", None, TYPE_NAMING))
        == "k: expected int or float, got list"
    )
    assert str(refused(validation.of_kind, float("nan"), (float,), "k", None, TYPE_NAMING)) == "k: not a finite number"
    assert (
        str(refused(validation.of_kind, float("inf"), (float,), "k", "a number", SPEC_WORDING))
        == "k: expected a finite number, got inf"
    )


def test_integer_tells_a_wrong_kind_from_a_wrong_size_where_the_wording_does():
    assert validation.integer(10**40, "x", -math.inf, math.inf) == 10**40  # open bounds
    assert validation.integer(-(10**40), "x", -math.inf, 0) == -(10**40)
    assert str(refused(validation.integer, 2, "n", 3, math.inf, SPEC_WORDING)) == "n: expected an integer >= 3, got 2"
    assert str(refused(validation.integer, 9, "n", -math.inf, 9, SPEC_WORDING)) == "n: expected an integer < 9, got 9"
    assert str(refused(validation.integer, 9, "n", 0, 9, SPEC_WORDING)) == "n: expected an integer in [0, 9), got 9"
    assert str(refused(validation.integer, True, "n", 3, math.inf, SPEC_WORDING)) == "n: expected an integer, got True"
    assert str(refused(validation.integer, 2**70, "n", 0, 2**63, TYPE_NAMING)) == "n: integer out of range"
    assert str(refused(validation.integer, 2.0, "n", 0, 2**63, TYPE_NAMING)) == "n: expected an integer, got float"
    # the wire's wording says the same for both, and shows neither value
    assert str(refused(validation.integer, 2**70, "n")) == str(refused(validation.integer, "x" * 99, "n"))


def test_bounded_list_bounds_both_ends():
    assert validation.bounded_list([1, 2], "w", math.inf, 2) == [1, 2]
    assert str(refused(validation.bounded_list, [1], "w", 5, 2)) == "w: expected a bounded list"
    assert str(refused(validation.bounded_list, [1], "w", math.inf, 2, "a list", SPEC_WORDING)) == (
        "w: expected at least 2 items"
    )
    assert str(refused(validation.bounded_list, [], "w", math.inf, 1, "a list", SPEC_WORDING)) == (
        "w: expected at least 1 item"
    )
    assert str(refused(validation.bounded_list, [1, 2], "w", 1, 0, "a list", SPEC_WORDING)) == (
        "w: expected at most 1 item"
    )
    assert (
        str(refused(validation.bounded_list, "ab", "w", 5, 0, "a list", SPEC_WORDING)) == "w: expected a list, got 'ab'"
    )
    node = yaml.compose("a: 1")
    assert str(refused(validation.bounded_list, node, "w", 5, 0, "a list", SPEC_WORDING)) == (
        "w: expected a list, got a mapping"
    )


def test_one_of_in_each_wording():
    assert validation.one_of("b", ("a", "b"), "k", "letter", SPEC_WORDING) == "b"
    assert str(refused(validation.one_of, "c", ("a", "b"), "k", "letter", SPEC_WORDING)) == (
        "k: unknown letter 'c' (expected one of: a, b)"
    )
    assert str(refused(validation.one_of, "c", ("a", "b"), "k", "letter")) == "k: 'c' is not one of a, b"


def test_object_keys_names_the_first_key_that_breaks_a_rule():
    allowed = ("a", "b", "c")
    assert validation.object_keys(["a", "c"], allowed, "o", ("a",), TERSE) == {"a", "c"}
    # in the order given: the unknown key before the repeated one, or the other way round
    assert str(refused(validation.object_keys, ["z", "a", "a"], allowed, "o", (), TERSE)) == "o: unknown key 'z'"
    assert str(refused(validation.object_keys, ["a", "a", "z"], allowed, "o", (), TERSE)) == "o: duplicate key 'a'"
    # every given key is fine before a required one is missed; required keys in their order
    assert str(refused(validation.object_keys, ["a", "z"], allowed, "o", ("b",), TERSE)) == "o: unknown key 'z'"
    assert str(refused(validation.object_keys, ["a"], allowed, "o", ("c", "b"), TERSE)) == "o: missing key 'c'"
    # the spec's wording puts a key's problem at the key's path, and a missing key at the object
    err = refused(validation.object_keys, ["a", "zz"], allowed, "specs[0]", ("a",), SPEC_WORDING)
    assert (err.where, err.problem) == ("specs[0].zz", "unknown key (expected one of: a, b, c)")
    err = refused(validation.object_keys, ["a", "a"], allowed, "s", (), SPEC_WORDING)
    assert (err.where, err.problem) == ("s.a", "duplicate key")
    err = refused(validation.object_keys, [], allowed, "s", ("b",), SPEC_WORDING)
    assert (err.where, err.problem) == ("s", "missing required key 'b'")


def test_object_keys_reads_a_generator_one_key_at_a_time():
    """A boundary's own rule for a key (raised from its generator) comes in the keys' order."""
    pulled = []

    def keys():
        for key in ("a", "zz", "boom"):
            if key == "boom":
                raise AssertionError("read past the unknown key")
            pulled.append(key)
            yield key

    assert str(refused(validation.object_keys, keys(), ("a",), "o", (), TERSE)) == "o: unknown key 'zz'"
    assert pulled == ["a", "zz"]


def test_a_wording_words_and_does_not_decide():
    """A made-up wording changes every message of a check, and nothing it accepts or refuses."""

    class Loud(validation.Wording):
        def expected(self, what, value):
            return f"WANTED {what.upper()}"

    loud = Loud()
    assert validation.integer(4, "x", 0, 5, loud) == 4
    assert str(refused(validation.integer, "4", "x", 0, 5, loud)) == "x: WANTED AN INTEGER"
    assert str(refused(validation.integer, 5, "x", 0, 5, loud)) == "x: WANTED AN INTEGER"  # range: the base's default
    assert str(refused(validation.bounded_list, [1, 2], "x", 1, 0, "a pair", loud)) == "x: WANTED A PAIR"
    assert str(refused(validation.object_keys, ["q"], ("a",), "x", (), loud)) == "x: unknown key 'q'"


# ------------------------------------------------------------------ the boundaries
def test_a_worker_frame_error_is_a_protocol_error_naming_the_field():
    record = {**framing.StepRecord(0).wire(), "launches": "3"}
    body, _ = framing.split_frame(framing.observation_frame("s/c", [record], []))
    with pytest.raises(ProtocolError) as info:
        observations.decode_observations(body, "s/c", 1)
    assert (info.value.where, info.value.problem) == ("steps[0].launches", "expected an integer")


def test_a_report_error_is_a_report_error_naming_the_field():
    report = {"format": 2, "submission": "s", "score": 1, "max_score": "2", "cases": [], "specs": []}
    with pytest.raises(ReportError) as info:
        report_from_json(json.loads(json.dumps(report)))
    assert str(info.value) == "report.max_score: expected float, got str"
    assert info.value.where == "report.max_score"
    with pytest.raises(ReportError, match=r"^report\.cases\[0\]\.status: 'won' is not one of passed, "):
        report_from_json({**report, "max_score": 2, "cases": [{"status": "won"}]})


def test_a_spec_error_carries_its_file_and_line():
    import yaml

    from grader.suite.spec_reading import NodeReader

    node = yaml.compose("a: 1\nb: [1]\n")
    with pytest.raises(SpecError) as info:
        NodeReader("specs/x.yaml").mapping(node, "case", ("a",))
    err = info.value
    assert str(err) == "specs/x.yaml:2: case.b: unknown key (expected one of: a)"
    assert (err.where, err.problem) == ("specs/x.yaml:2: case.b", "unknown key (expected one of: a)")
