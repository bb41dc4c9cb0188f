"""Writing ``report.json``: the JSON form of a :class:`~grader.judging.results.Report`.

One job: a report in, its deterministic text out (sorted keys, one-space indent), checked
against docs/report.schema.json while the tests run. Reading it back is
:mod:`grader.judging.report_reading`'s.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from grader.judging.results import Report

# Field names of each result type, in declaration order and sorted (report.json's key order).
_FIELDS: dict[type, tuple[str, ...]] = {}
_SORTED_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(cls.__dataclass_fields__)
        _SORTED_FIELDS[cls] = tuple(sorted(names))
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


_encode_text = json.encoder.encode_basestring_ascii  # what json.dumps uses (ensure_ascii), in C


def _float_text(x: float) -> str:
    if x != x:
        return "NaN"
    if x == math.inf:
        return "Infinity"
    if x == -math.inf:
        return "-Infinity"
    return float.__repr__(x)


def _scalar_text(value: Any) -> str | None:
    """A leaf's JSON text as json.dumps writes it; None for a container."""
    kind = type(value)
    if kind is str:
        return _encode_text(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return _float_text(value)
    return None


# (type, indent) -> for each sorted field: (its name, the text before its value)
_FIELD_PREFIXES: dict[tuple[type, str], tuple[tuple[str, str], ...]] = {}


def _write_json(value: Any, indent: str, out: list) -> None:
    """Append ``value`` to ``out`` exactly as ``json.dumps(report_to_json(...), indent=1,
    sort_keys=True)`` writes it, reading the result types directly (no intermediate dicts)."""
    text = _scalar_text(value)
    if text is not None:
        out.append(text)
        return
    kind = type(value)
    inner = indent + " "
    if kind is tuple or kind is list:
        if not value:
            out.append("[]")
            return
        separator = "[\n" + inner
        for item in value:
            out.append(separator)
            separator = ",\n" + inner
            text = _scalar_text(item)
            if text is None:
                _write_json(item, inner, out)
            else:
                out.append(text)
        out.append("\n" + indent + "]")
    elif hasattr(kind, "__dataclass_fields__"):
        prefixes = _FIELD_PREFIXES.get((kind, indent))
        if prefixes is None:
            _field_names(kind)
            names = _SORTED_FIELDS[kind]
            prefixes = _FIELD_PREFIXES[(kind, indent)] = tuple(
                (name, ("{\n" if i == 0 else ",\n") + inner + _encode_text(name) + ": ") for i, name in enumerate(names)
            )
        if not prefixes:
            out.append("{}")
            return
        for name, prefix in prefixes:
            out.append(prefix)
            item = getattr(value, name)
            text = _scalar_text(item)
            if text is None:
                _write_json(item, inner, out)
            else:
                out.append(text)
        out.append("\n" + indent + "}")
    else:
        raise TypeError(f"not a result value: {kind.__name__}")


def report_json_text(report: Report) -> str:
    """report.json's text: ``json.dumps(report_to_json(report), indent=1, sort_keys=True)``
    plus a newline, byte for byte, written several times faster (a class writes thousands)."""
    out: list[str] = []
    try:
        _write_json(report, "", out)
    except TypeError:  # a value of a type the results never hold: the general encoder says what
        return json.dumps(report_to_json(report), indent=1, sort_keys=True) + "\n"
    out.append("\n")
    return "".join(out)


def write_report(report: Report, path) -> None:
    from pathlib import Path

    from grader.judging.report_schema import check_report_text

    text = report_json_text(report)
    check_report_text(text, str(path))  # against docs/report.schema.json while the tests run
    Path(path).write_text(text, encoding="utf-8")
