"""report.json against its published JSON Schema (docs/report.schema.json), while the tests run.

The schema is the contract for anyone who reads report.json without graphgrade. The test suite
sets :data:`SCHEMA_ENV` to the schema's path (tests/conftest.py), and :func:`grader.judging.report_writing.report_json_text`
then checks every report.json text it makes, in the test process and in every ``graphgrade`` it starts: a
field the writer adds and the schema lacks fails the test that wrote it. Outside the tests the
variable is unset and nothing here runs (the check needs ``jsonschema``, a test dependency).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

SCHEMA_ENV = "GRAPHGRADE_REPORT_SCHEMA"


class SchemaMismatch(Exception):
    """A report.json that its published schema refuses (a grader bug, found by the tests)."""


@lru_cache(maxsize=2)
def _validator(path: str):
    try:
        import jsonschema
    except ImportError:  # an installed wheel without the test extra (tests/test_install.py)
        return None
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def check_report_text(text: str, where: str = "report.json") -> None:
    """Raise :class:`SchemaMismatch` naming the first field the schema refuses, when
    :data:`SCHEMA_ENV` names a schema; else do nothing."""
    path = os.environ.get(SCHEMA_ENV)
    if not path:
        return
    validator = _validator(path)
    if validator is None:
        return
    error = next(iter(validator.iter_errors(json.loads(text))), None)
    if error is not None:
        at = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise SchemaMismatch(f"{where}: does not match {path} at {at}: {error.message[:300]}")
