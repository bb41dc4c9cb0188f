"""An independent scanner for the student kit: does anything of a hidden spec or of the
reference solution appear in a set of files, in any form we could think of?

Written apart from ``grader/commands/kit.py`` (which refuses to build a leaking kit) so that a bug in
one is not repeated in the other. Forms checked, for every file: the bytes as UTF-8 text
(whitespace collapsed), UTF-16/32, hex, base64 at every alignment, ROT13, URL and JSON
escapes; parsed YAML (every spec visible, no case with a hidden case's steps and checks);
parsed JSON strings; the constants of compiled ``.pyc`` code; members of nested zip and gzip
archives; function bodies compared as syntax trees with the reference's. Pickles and other
unreadable binaries are findings in themselves.
"""

from __future__ import annotations

import ast
import base64
import codecs
import functools
import gzip
import io
import json
import marshal
import types
import urllib.parse
import zipfile
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
MIN_LINE = 25


@dataclass(frozen=True, eq=False)  # hashed by identity, for the caches below
class Needles:
    texts: dict[str, str]  # needle -> what it is
    hidden_cases: dict[str, str]  # canonical steps+checks -> spec/case
    hidden_ids: frozenset[str]
    bodies: dict[str, str]  # ast.dump of a reference function body -> where


def _flat(text: str) -> str:
    return " ".join(text.split())


def _key(case: dict) -> str:
    return json.dumps([case.get("steps"), case.get("checks")], sort_keys=True, default=str)


def _bodies(source: str) -> dict[str, str]:
    out = {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = (
                node.body[1:]
                if node.body
                and isinstance(node.body[0], ast.Expr)
                and isinstance(getattr(node.body[0], "value", None), ast.Constant)
                else node.body
            )
            if len(body) >= 2:
                out[ast.dump(ast.Module(body=list(body), type_ignores=[]))] = node.name
    return out


def needles(specs_dir: Path = REPO / "specs", repo: Path = REPO) -> Needles:
    texts: dict[str, str] = {}
    cases: dict[str, str] = {}
    ids: set[str] = set()
    for path in sorted(specs_dir.glob("*.yaml")):
        for spec in yaml.safe_load(path.read_text())["specs"]:
            if spec["visibility"] == "visible":
                continue
            ids.add(spec["id"])
            texts[spec["id"]] = f"hidden spec id {spec['id']}"
            for key in ("title", "explanation", "hint"):
                texts[_flat(spec[key])] = f"hidden {key} of {spec['id']}"
            for case in spec["cases"]:
                texts[case["id"]] = f"hidden case id {spec['id']}/{case['id']}"
                texts[_flat(case["description"])] = f"hidden description of {spec['id']}/{case['id']}"
                cases[_key(case)] = f"{spec['id']}/{case['id']}"
    legit = "\n".join(
        p.read_text(errors="replace")
        for d in ("grader", "reports", "student_template", "labs/cudagraph/pack")  # the pack: the grader's code too
        for p in (repo / d).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    bodies: dict[str, str] = {}
    for path in sorted((repo / "reference").rglob("*.py")):
        source = path.read_text()
        for line in source.splitlines():
            s = line.strip()
            if len(s) >= MIN_LINE and s not in legit and not set(s) <= set("#-=_ "):
                texts.setdefault(s, f"a line of {path.relative_to(repo)}")
        for dump, name in _bodies(source).items():
            bodies.setdefault(dump, f"{path.relative_to(repo)}:{name}")
    return Needles(texts, cases, frozenset(ids), bodies)


@functools.cache
def _forms(needle: str) -> tuple[bytes, ...]:
    raw = needle.encode()
    forms = [needle.encode(enc) for enc in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")]
    forms += [raw.hex().encode(), raw.hex().upper().encode(), codecs.encode(needle, "rot13").encode()]
    forms += [urllib.parse.quote(needle).encode(), json.dumps(needle, ensure_ascii=True)[1:-1].encode()]
    if len(raw) >= 12:
        for pad in range(3):
            encoded = base64.b64encode(b"\0" * pad + raw)
            start = (pad * 4 + 2) // 3 + 1
            forms.append(encoded[start:-4])
    return tuple(f for f in forms if f and f != raw)


@functools.lru_cache(maxsize=4)
def _prefix_index(n: Needles) -> tuple[dict[bytes, list[tuple[bytes, str]]], list[tuple[bytes, str]]]:
    """Every encoded form by its first 8 bytes (one pass over a file finds them all), and the
    few forms too short for that."""
    index: dict[bytes, list[tuple[bytes, str]]] = {}
    short: list[tuple[bytes, str]] = []
    for needle in n.texts:
        for form in _forms(needle):
            if len(form) >= 8:
                index.setdefault(form[:8], []).append((form, needle))
            else:
                short.append((form, needle))
    return index, short


def _encoded_hits(data: bytes, n: Needles) -> set[str]:
    index, short = _prefix_index(n)
    hits = {needle for form, needle in short if form in data}
    for i in range(len(data) - 7):
        candidates = index.get(data[i : i + 8])
        if candidates:
            hits.update(needle for form, needle in candidates if data.startswith(form, i))
    return hits


def _code_strings(code: types.CodeType) -> list[str]:
    found = [code.co_name, *code.co_names, *code.co_varnames]
    for const in code.co_consts:
        if isinstance(const, str):
            found.append(const)
        elif isinstance(const, types.CodeType):
            found += _code_strings(const)
    return found


def scan_bytes(name: str, data: bytes, n: Needles, depth: int = 0) -> list[str]:
    """Every finding in one file (``name`` is only for messages and the kind of file)."""
    found: list[str] = []
    if data[:2] == b"PK" and depth < 3:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for member in zf.namelist():
                found += scan_bytes(f"{name}!{member}", zf.read(member), n, depth + 1)
        return found
    if data[:2] == b"\x1f\x8b" and depth < 3:
        return scan_bytes(f"{name}!gunzip", gzip.decompress(data), n, depth + 1)
    if data[:1] == b"\x80" and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return [f"{name}: a pickle, which has no place in a kit"]
    if name.endswith((".pyc", ".pyo")):
        try:
            code = marshal.loads(data[16:])
        except (ValueError, EOFError, TypeError):
            return [f"{name}: compiled code that cannot be read"]
        text = "\n".join(_code_strings(code))
    else:
        text = data.decode("utf-8", errors="replace")
        if name.endswith((".so", ".npy", ".npz", ".pkl", ".pickle")):
            found.append(f"{name}: a binary file, which has no place in a kit")
    flat = _flat(text)
    encoded = _encoded_hits(data, n)
    for needle, what in n.texts.items():
        if _flat(needle) in flat:
            found.append(f"{name}: {what}")
        elif needle in encoded:
            found.append(f"{name}: {what} (encoded)")
    if name.endswith(".py"):
        found += [f"{name}: the code of {n.bodies[d]}" for d in _bodies(text) if d in n.bodies]
    if name.endswith((".yaml", ".yml")):
        doc = yaml.safe_load(text) or {}
        specs = doc.get("specs") if isinstance(doc, dict) else None  # a lab.yaml's specs is its folder
        for spec in specs if isinstance(specs, list) else []:
            if spec.get("visibility") != "visible" or spec.get("id") in n.hidden_ids:
                found.append(f"{name}: a spec that is not public: {spec.get('id')}")
            for case in spec.get("cases", []):
                if _key(case) in n.hidden_cases:
                    found.append(f"{name}: the steps and checks of hidden case {n.hidden_cases[_key(case)]}")
    if name.endswith(".json"):

        def strings(value):
            if isinstance(value, str):
                yield value
            elif isinstance(value, dict):
                for k, v in value.items():
                    yield k
                    yield from strings(v)
            elif isinstance(value, list):
                for v in value:
                    yield from strings(v)

        joined = _flat("\n".join(strings(json.loads(text))))
        found += [f"{name}: {what} (in JSON)" for needle, what in n.texts.items() if _flat(needle) in joined]
    return found


def scan_zip(path: Path, n: Needles) -> list[str]:
    return scan_bytes(path.name, path.read_bytes(), n)


def scan_tree(root: Path, n: Needles) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            found += scan_bytes(str(path.relative_to(root)), path.read_bytes(), n)
    return found
