"""Binding call arguments to parameter names, from the core's operator table.

Derivative formulas refer to arguments by their schema names (``input``,
``other``, ``alpha``), so the recorder binds each recorded call the way the
core's C++ parser did: overloads in table order, positional then keyword,
defaults filled in.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

import flambeau


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # e.g. "Tensor", "int[]?", "Scalar"
    default: object
    has_default: bool
    kwonly: bool

    @property
    def is_tensor(self) -> bool:
        return self.type.rstrip("?") == "Tensor"

    @property
    def is_tensor_list(self) -> bool:
        return self.type.rstrip("?") == "Tensor[]"


@dataclass(frozen=True)
class Schema:
    name: str
    overload: str
    params: tuple[Param, ...]
    n_outputs: int

    @property
    def key(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name


def parse(schema: str) -> Schema:
    m = re.fullmatch(r"([\w.]+)\((.*)\)\s*->\s*(.+)", schema.strip())
    full, body, ret = m.groups()
    name, _, overload = full.partition(".")
    params, kwonly, depth, cur, pieces = [], False, 0, "", []
    for ch in body:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            pieces.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        pieces.append(cur)
    for piece in (p.strip() for p in pieces):
        if piece == "*":
            kwonly = True
            continue
        decl, eq, default = piece.partition("=")
        ptype, pname = decl.strip().rsplit(" ", 1)
        value = ast.literal_eval(default.strip()) if eq else None
        params.append(Param(pname, ptype, value, bool(eq), kwonly))
    ret = ret.strip()
    n_out = ret.count(",") + 1 if ret.startswith("(") and ret != "()" else 1
    return Schema(name, overload, tuple(params), n_out)


# Python indexing is bound by hand in the core, not through the table.
INDEXING = {
    "__getitem__": "__getitem__(Tensor self, Any indices) -> Tensor",
    "__setitem__": "__setitem__(Tensor self, Any indices, Tensor value) -> Tensor",
}


@functools.cache
def overloads(name: str) -> tuple[Schema, ...]:
    """Schemas of an operator (or of the functional form of an in-place ``name_``)."""
    if name in INDEXING:
        return (parse(INDEXING[name]),)
    rows = [r for r in flambeau.ops_table() if r["name"] == name]
    if not rows and name.endswith("_"):
        rows = [r for r in flambeau.ops_table() if r["name"] == name[:-1]]
    return tuple(parse(r["schema"]) for r in rows)


def _fits(p: Param, v) -> bool:
    t = p.type.rstrip("?")
    if t == "Any":
        return True
    if v is None:
        return p.type.endswith("?") or (p.has_default and p.default is None)
    if t == "Tensor":
        return isinstance(v, (flambeau.Tensor, int, float, complex, bool))
    if t == "Tensor[]":
        return isinstance(v, (list, tuple))
    if t == "int":
        return isinstance(v, int) and not isinstance(v, flambeau.Tensor)
    if t.startswith("int["):
        return isinstance(v, (int, list, tuple))
    return True


def bind(name: str, args: tuple, kwargs: dict) -> tuple[Schema, dict]:
    """(schema, {param: value}) for the first overload the call fits."""
    for schema in overloads(name):
        bound = _try_bind(schema, args, kwargs)
        if bound is not None:
            return schema, bound
    raise RuntimeError(f"autograd: cannot bind the arguments of a call to '{name}'")


def _try_bind(schema: Schema, args, kwargs):
    params = schema.params
    positional = [p for p in params if not p.kwonly]
    bound = {}
    if len(args) > len(positional):
        # zeros(2, 3)-style varargs for a leading int list
        if positional and positional[min(len(positional) - 1, 1)].type.startswith("int["):
            first = 1 if len(positional) > 1 and params[0].is_tensor else 0
            args = tuple(args[:first]) + (tuple(args[first:]),)
        else:
            return None
    for p, v in zip(positional, args):
        if not _fits(p, v):
            return None
        bound[p.name] = v
    for k, v in kwargs.items():
        p = next((q for q in params if q.name == k), None)
        if p is None or k in bound or not _fits(p, v):
            return None
        bound[k] = v
    for p in params:
        if p.name not in bound:
            if not p.has_default:
                return None
            bound[p.name] = p.default
    return {p.name: bound[p.name] for p in params}  # schema order: formulas rely on it
