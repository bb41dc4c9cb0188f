"""Writing ``report.json``: the JSON form of a :class:`~grader.judging.results.Report`.

One job: a report in, its text out, checked against docs/report.schema.json while the tests run.
Reading it back is :mod:`grader.judging.report_reading`'s.

The text is orjson's: each result's fields in the order :mod:`grader.judging.results` declares
them, a two-space indent, non-ASCII text as UTF-8. The same report always gives the same bytes
(what a rewrite that skips unchanged reports compares). orjson writes a report over ten times
faster than the hand-written writer it replaced and in a few lines (benchmarks/report_json.py;
a class writes thousands of reports). A number that is not finite (one the grader never
computes) is written ``null``, which the reader refuses naming the field; a value orjson will
not write (text with a lone surrogate, which a student's exception message may hold) sends the
report through the json module instead, ASCII-escaped, in the same key order.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson

from grader.judging.report_schema import check_report_text
from grader.judging.results import Report

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE

# Field names of each result type, in declaration order (report.json's key order).
_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(cls.__dataclass_fields__)
    return names


def _plain(value: Any) -> Any:
    """What :func:`dataclasses.asdict` makes of a result, without its deep copies (the leaves are
    immutable: str, int, float, bool, None), which cost more than the rest of report writing."""
    if hasattr(type(value), "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in _field_names(type(value))}
    if type(value) is tuple or type(value) is list:
        return type(value)(_plain(v) for v in value)
    if isinstance(value, (str, int, float, type(None))):
        return value
    if isinstance(value, dict):
        return type(value)((_plain(k), _plain(v)) for k, v in value.items())
    return copy.deepcopy(value)


def report_to_json(report: Report, *, timing: bool = True) -> dict[str, Any]:
    """The JSON form of a report; ``timing=False`` drops wall-clock fields."""
    data = _plain(report)
    if not timing:
        data.pop("duration_s", None)
        for case in data["cases"]:
            case.pop("duration_s", None)
    return data


def report_json_text(report: Report) -> str:
    """report.json's text (see the module's note), checked against docs/report.schema.json while
    the tests run: every report.json any command writes is made here."""
    try:
        text = orjson.dumps(report, option=_OPTIONS).decode()
    except orjson.JSONEncodeError:  # a lone surrogate, or an integer past 64 bits: the json module escapes
        text = json.dumps(report_to_json(report), indent=2) + "\n"
    check_report_text(text, f"report.json of {report.submission}")
    return text


def write_report(report: Report, path) -> None:
    from pathlib import Path

    Path(path).write_text(report_json_text(report), encoding="utf-8")
