"""Constant strings as code builds them, folded without running anything (for the integrity scan,
:mod:`grader.judging.scan_rules`): ``getattr(op, "_wit" + "ness")`` names ``_witness`` as surely as
``op._witness`` does. Each node is folded once and a folded string is bounded in length, so
folding is linear in the tree; a format that could allocate (a width, ``%*d``) is not folded."""

from __future__ import annotations

import ast
import re

MAX_FOLDED = 4096  # characters of a folded string: longer ones are not folded
_SIMPLE_FORMAT = re.compile(r"(?:[^{}]|\{\{|\}\}|\{[A-Za-z0-9_]*\})*")
_SIMPLE_PERCENT = re.compile(r"(?:[^%]|%%|%s)*")


class Folder:
    """Constant strings as the code builds them: ``"ex" + "ec"``, ``"%s%s" % (a, b)``,
    ``"{}{}".format(a, b)``, ``f"{a}{b}"``, ``"".join([a, b])``, ``chr(101)``, ``s[::-1]``,
    ``b"exec".decode()``, and names bound once to such a string. Each node is folded once."""

    def __init__(self) -> None:
        self.names: dict[str, str | None] = {}  # name -> its one folded value (None: not one value)
        self.memo: dict[int, str | None] = {}

    def bind(self, name: str, value: ast.AST | None) -> None:
        folded = self.fold(value) if value is not None else None
        if name in self.names and self.names[name] != folded:
            self.names[name] = None
        else:
            self.names[name] = folded

    def fold(self, node: ast.AST | None) -> str | None:
        if node is None:
            return None
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        key = id(node)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = None
        try:
            value = self._fold(node)
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, UnicodeError):
            value = None
        if value is not None and len(value) > MAX_FOLDED:
            value = None
        self.memo[key] = value
        return value

    def _all(self, nodes) -> list[str] | None:
        out = []
        for n in nodes:
            v = self.fold(n)
            if v is None:
                return None
            out.append(v)
        return out

    def _fold(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return node.value
            if isinstance(node.value, bytes) and len(node.value) <= MAX_FOLDED:
                return node.value.decode("latin-1")
            return None
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    if value.format_spec is not None or value.conversion not in (-1, 115):
                        return None
                    value = value.value
                part = self.fold(value)
                if part is None:
                    return None
                parts.append(part)
            return "".join(parts)
        if isinstance(node, ast.Subscript):
            text = self.fold(node.value)
            if text is None:
                return None
            if isinstance(node.slice, ast.Slice):
                bounds = [
                    _small_int(b) if b is not None else None
                    for b in (node.slice.lower, node.slice.upper, node.slice.step)
                ]
                given = [b for b in (node.slice.lower, node.slice.upper, node.slice.step) if b is not None]
                if len([b for b in bounds if b is not None]) != len(given):
                    return None
                return text[slice(*bounds)]
            index = _small_int(node.slice)
            return text[index] if index is not None else None
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _binop(self, node: ast.BinOp) -> str | None:
        if isinstance(node.op, ast.Add):
            left, right = self.fold(node.left), self.fold(node.right)
            return left + right if left is not None and right is not None else None
        if isinstance(node.op, ast.Mod):
            template = self.fold(node.left)
            if template is None or not _SIMPLE_PERCENT.fullmatch(template):
                return None
            args = self._all(node.right.elts) if isinstance(node.right, ast.Tuple) else self._all([node.right])
            return template % tuple(args) if args is not None else None
        if isinstance(node.op, ast.Mult):
            for text_node, count_node in ((node.left, node.right), (node.right, node.left)):
                text, count = self.fold(text_node), _small_int(count_node)
                if text is not None and count is not None and 0 <= count and len(text) * count <= MAX_FOLDED:
                    return text * count
        return None

    def _call(self, node: ast.Call) -> str | None:
        func = node.func
        if isinstance(func, ast.Name) and len(node.args) == 1 and not node.keywords:
            if func.id == "chr":
                code = _small_int(node.args[0], 0x110000)
                return chr(code) if code is not None and code >= 0 else None
            if func.id == "str":
                return self.fold(node.args[0])
            return None
        if not isinstance(func, ast.Attribute):
            return None
        base = self.fold(func.value)
        if base is None:
            return None
        if func.attr == "join" and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
            parts = self._all(node.args[0].elts)
            return base.join(parts) if parts is not None else None
        if func.attr == "format" and _SIMPLE_FORMAT.fullmatch(base):
            args = self._all(node.args)
            kwargs = self._all([k.value for k in node.keywords])
            if args is None or kwargs is None or any(k.arg is None for k in node.keywords):
                return None
            return base.format(*args, **{k.arg: v for k, v in zip(node.keywords, kwargs)})
        if func.attr in ("lower", "upper", "strip", "lstrip", "rstrip", "decode") and not node.keywords:
            if func.attr == "decode":
                return base if not node.args else None
            args = self._all(node.args)
            return getattr(base, func.attr)(*args) if args is not None and len(args) <= 1 else None
        if func.attr == "replace" and len(node.args) == 2:
            old, new = self._all(node.args) or (None, None)
            if old and new is not None and len(base) * max(1, len(new)) <= 4 * MAX_FOLDED:
                return base.replace(old, new)
        return None


def _small_int(node: ast.AST | None, limit: int = MAX_FOLDED) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _small_int(node.operand, limit)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) <= limit:
        return node.value
    return None
