"""Unit tests of ``grader.commands.cli_common``: the exit codes, spec loading that ends in one line per
error and exit 2, and number arguments reported against their own flag."""

from __future__ import annotations

import argparse

import pytest

from grader.commands.cli_common import (
    EXIT_USAGE,
    default_specs_dir,
    load_specs,
    number_arg,
)


def test_the_default_specs_are_the_shipped_ones():
    assert (default_specs_dir() / "README.md").is_file()
    assert any(default_specs_dir().glob("*.yaml"))


def test_specs_that_do_not_load_are_one_line_per_error_and_exit_2(tmp_path, capsys):
    (tmp_path / "one.yaml").write_text("format: 1\nspecs:\n  - id: x\n    title: 3\n")
    (tmp_path / "two.yaml").write_text("format: 1\nspecs: [\n")
    with pytest.raises(SystemExit) as info:
        load_specs(tmp_path)
    assert info.value.code == EXIT_USAGE
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2 and all(line.startswith("graphgrade: ") for line in lines)
    assert any("one.yaml:" in line for line in lines) and any("two.yaml:" in line for line in lines)
    assert "Traceback" not in "\n".join(lines)


def _parse(flag_type, text):
    parser = argparse.ArgumentParser(prog="graphgrade", exit_on_error=False)
    parser.add_argument("--jobs", type=flag_type)
    return parser.parse_args(["--jobs", text]).jobs


@pytest.mark.parametrize(
    "kwargs, text, value",
    [
        ({"minimum": 0}, "2.5", 2.5),
        ({"minimum": 1, "integer": True, "inclusive": True}, "1", 1),
        ({"minimum": 0, "maximum": 100}, "100", 100.0),
    ],
)
def test_a_number_in_range_is_accepted(kwargs, text, value):
    parsed = _parse(number_arg(**kwargs), text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize(
    "kwargs, text, words",
    [
        ({"minimum": 1, "integer": True, "inclusive": True}, "0", "must be at least 1, not 0"),
        ({"minimum": 0}, "0", "must be more than 0, not 0"),
        ({"minimum": 0}, "nan", "must be more than 0, not nan"),
        ({"minimum": 0}, "inf", "must be more than 0, not inf"),
        ({"minimum": 0, "maximum": 100}, "101", "must be from 0 to 100, not 101"),
        ({"minimum": 1, "integer": True}, "2.5", "expected a whole number, not '2.5'"),
        ({"minimum": 0}, "ten", "expected a number, not 'ten'"),
    ],
)
def test_a_bad_number_is_reported_against_its_flag(kwargs, text, words):
    with pytest.raises(argparse.ArgumentError) as info:
        _parse(number_arg(**kwargs), text)
    assert str(info.value) == f"argument --jobs: {words}"


def test_the_type_is_named_number_in_argparse_messages():
    """argparse names the type in its own messages ("invalid number value")."""
    assert number_arg(0).__name__ == "number"
    assert number_arg(0)("1e3") == 1000.0
