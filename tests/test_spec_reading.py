"""Unit tests of ``grader.suite.spec_reading``: YAML nodes read into typed values, and every problem a
:class:`SpecError` phrased ``file:line: path: message`` on one line."""

from __future__ import annotations

import pytest
import yaml

from grader.spec_model import ArrayValue, MaskValue, OpSpec, OpsValue, PlainValue, RefValue
from grader.suite.spec_reading import (
    MAX_ARRAY_ELEMENTS,
    MAX_INT_DIGITS,
    NodeReader,
    SpecError,
    printable,
    read_array,
    read_op,
    read_value,
    refuse_tags,
)

FILE = "specs/x.yaml"


def _node(text: str):
    return yaml.compose(text, Loader=yaml.SafeLoader)


def _reader() -> NodeReader:
    return NodeReader(FILE)


def _fails(call, *args) -> str:
    with pytest.raises(SpecError) as info:
        call(*args)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_errors_name_the_file_the_line_and_the_path():
    node = _node("a: 1\nb:\n  c: 2\n")
    value = node.value[1][1]  # the mapping under b, which starts on line 3
    message = _fails(_reader().mapping, value, "specs[0].b", ("x",))
    assert message == f"{FILE}:3: specs[0].b.c: unknown key (expected one of: x)"


def test_mapping_refuses_duplicates_missing_keys_and_yaml_booleans_as_keys():
    r = _reader()
    assert "duplicate key" in _fails(r.mapping, _node("a: 1\na: 2\n"), "s", ("a",))
    assert _fails(r.mapping, _node("a: 1\n"), "s", ("a", "b"), ("b",)).endswith("s: missing required key 'b'")
    assert "key 'on' reads as True in YAML; quote it" in _fails(r.mapping, _node("on: 1\n"), "s", ("on",))
    assert "expected a mapping, got a list" in _fails(r.mapping, _node("[1]"), "s", ("a",))
    assert set(r.mapping(_node("a: 1\nb: 2\n"), "s", ("a", "b"), ("a",))) == {"a", "b"}


def test_a_key_problem_is_at_the_key_line_and_a_missing_key_at_the_mapping_line():
    """The toolkit's key check decides; the reader locates: the key being read, else the mapping."""
    r = _reader()
    text = "# a comment\na: 1\nb: 2\na: 3\nzz: 4\n"
    assert _fails(r.mapping, _node(text), "s", ("a", "b")) == f"{FILE}:4: s.a: duplicate key"
    assert _fails(r.mapping, _node(text), "s", ("a",)) == f"{FILE}:3: s.b: unknown key (expected one of: a)"
    text = "# a comment\na: 1\nb: 2\n"
    assert _fails(r.mapping, _node(text), "s", ("a", "b", "c"), ("c",)) == f"{FILE}:2: s: missing required key 'c'"
    # YAML's own key rules come in the keys' order, with the toolkit's
    assert _fails(r.mapping, _node("zz: 1\non: 2\n"), "s", ("a",)).startswith(f"{FILE}:1: s.zz: unknown key")
    assert "reads as True" in _fails(r.mapping, _node("a: 1\non: 2\nzz: 3\n"), "s", ("a",))
    assert _fails(r.mapping, _node("zz: 1\n[a]: 2\n"), "s", ("a",)).startswith(f"{FILE}:1: s.zz: unknown key")
    assert _fails(r.mapping, _node("a: 1\n[a]: 2\n"), "s", ("a",)) == f"{FILE}:2: s: keys must be plain words"


@pytest.mark.parametrize(
    "method, text, words",
    [
        ("integer", "true", "expected an integer, got True"),
        ("integer", "1.5", "expected an integer, got 1.5"),
        ("number", ".nan", "expected a finite number, got nan"),
        ("number", "abc", "expected a number, got 'abc'"),
        ("text", "'   '", "must not be empty"),
        ("text", "[a]", "expected text, got a list"),
        ("ident", "a b", "expected an id of letters, digits, - and _, got 'a b'"),
    ],
)
def test_typed_scalars_say_what_they_expected_and_what_they_got(method, text, words):
    message = _fails(getattr(_reader(), method), _node(text), "specs[0].v")
    assert message == f"{FILE}:1: specs[0].v: {words}"


def test_typed_scalars_that_are_right_are_returned():
    r = _reader()
    assert r.integer(_node("3"), "v", minimum=1) == 3
    assert r.number(_node("2.5"), "v") == 2.5
    assert r.text(_node("'  padded  '"), "v") == "padded"
    assert r.ident(_node("shape-cache_2"), "v") == "shape-cache_2"
    assert r.choice(_node("float64"), "v", ("float32", "float64"), "dtype") == "float64"
    assert "unknown dtype 'int8' (expected one of: float32)" in _fails(
        r.choice, _node("int8"), "v", ("float32",), "dtype"
    )
    assert "expected an integer >= 1, got 0" in _fails(r.integer, _node("0"), "v", 1)


def test_a_tag_or_an_overlong_number_is_refused_not_constructed():
    r = _reader()
    assert "unsupported YAML tag" in _fails(r.scalar, _node("!!python/name:os.system ''"))
    assert f"more than {MAX_INT_DIGITS} digits" in _fails(r.scalar, _node("1" * (MAX_INT_DIGITS + 1)))
    assert "unsupported YAML tag 'tag:yaml.org,2002:set'" in _fails(refuse_tags, r, _node("a: !!set {x}\n"))
    refuse_tags(r, _node("a: [1, {b: 2}]\n"))  # plain YAML passes


def test_an_unprintable_key_keeps_the_error_on_one_line():
    message = _fails(_reader().mapping, _node('"a\\nb": 1\n'), "s", ("x",))
    assert "s.a\\nb: unknown key" in message
    assert printable("tab\there") == "tab\\there" and printable("plain") == "plain"


def test_ops_are_names_or_one_key_mappings_with_their_argument():
    r = _reader()
    assert read_op(r, _node("relu"), "ops[0]") == OpSpec("relu")
    assert read_op(r, _node("{add: 1.5}"), "ops[0]") == OpSpec("add", 1.5)
    assert read_op(r, _node("{matmul: 3}"), "ops[0]") == OpSpec("matmul", 3)
    assert "op 'add' needs a" in _fails(read_op, r, _node("add"), "ops[0]")
    assert "op 'relu' takes no argument" in _fails(read_op, r, _node("{relu: 1}"), "ops[0]")
    assert "expected an integer >= 0" in _fails(read_op, r, _node("{matmul: -1}"), "ops[0]")


def test_arrays_are_seeded_shapes_or_literal_rectangular_values():
    r = _reader()
    assert read_array(r, _node("{shape: [4, 8], seed: 3}"), "x") == ArrayValue("float32", (4, 8), 3)
    literal = read_array(r, _node("{values: [[1, 2], [3, 4]], dtype: float64}"), "x")
    assert literal == ArrayValue("float64", (2, 2), values=((1.0, 2.0), (3.0, 4.0)))
    assert "not both" in _fails(read_array, r, _node("{values: [1], shape: [1]}"), "x")
    assert "rectangular" in _fails(read_array, r, _node("{values: [[1, 2], [3]]}"), "x")
    assert "rectangular" in _fails(read_array, r, _node("{values: [true, 1]}"), "x")
    assert "rectangular" in _fails(read_array, r, _node("{values: [1e999]}"), "x")
    assert f"at most {MAX_ARRAY_ELEMENTS} elements" in _fails(
        read_array, r, _node(f"{{shape: [{MAX_ARRAY_ELEMENTS}, 2]}}"), "x"
    )
    assert "missing required key 'shape'" in _fails(read_array, r, _node("{seed: 1}"), "x")


def test_values_of_each_kind_and_refs_only_to_earlier_names():
    r = _reader()
    assert read_value(r, _node("{ops: [relu]}"), "v", set()) == OpsValue((OpSpec("relu"),))
    assert read_value(r, _node("{capturable: [true, false]}"), "v", set()) == MaskValue((True, False))
    assert read_value(r, _node("{ref: runner}"), "v", {"runner"}) == RefValue("runner")
    assert read_value(r, _node("[1, two]"), "v", set()) == PlainValue((1, "two"))
    assert "no earlier step is named 'later'" in _fails(read_value, r, _node("{ref: later}"), "v", set())
    assert "exactly one key" in _fails(read_value, r, _node("{ops: [relu], ref: a}"), "v", set())
    assert "unknown value kind 'tensor'" in _fails(read_value, r, _node("{tensor: 1}"), "v", set())


def test_a_plain_value_is_a_number_text_a_bool_or_null():
    r = _reader()
    assert read_value(r, _node("[1, 2.5, x, true, null]"), "v", set()) == PlainValue((1, 2.5, "x", True, None))
    assert _fails(read_value, r, _node("[1, 2020-01-31]"), "v", set()) == (
        f"{FILE}:1: v[1]: expected a number, text, true/false or null, got datetime.date(2020, 1, 31)"
    )
    assert _fails(read_value, r, _node("[.inf]"), "v", set()) == f"{FILE}:1: v[0]: expected a finite number, got inf"
