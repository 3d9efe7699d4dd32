"""Binding call arguments to parameter names, from the core's operator table.

Derivative formulas refer to arguments by their schema names (``input``,
``other``, ``alpha``), so the recorder binds each recorded call the way the
core's C++ parser did: overloads in table order, positional then keyword,
defaults filled in. The parameters come parsed in ``flambeau.ops_table()``.
"""

from __future__ import annotations

import ast
import functools
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


def _default(p: dict) -> object:
    if p["default"] is None:
        return None
    if p["type"].startswith("MemoryFormat") and p["default"] != "None":
        return getattr(flambeau, p["default"])  # a named default: contiguous_format
    return ast.literal_eval(p["default"])


def _from_row(row: dict) -> Schema:
    params = tuple(
        Param(
            p["name"],
            p["type"],
            _default(p),
            p["default"] is not None,
            p["kwonly"],
        )
        for p in row["params"]
    )
    return Schema(row["name"], row["overload"], params, row["n_outputs"])


# Python indexing is bound by hand in the core, not through the table.
INDEXING = {
    "__getitem__": (
        Param("self", "Tensor", None, False, False),
        Param("indices", "Any", None, False, False),
    ),
    "__setitem__": (
        Param("self", "Tensor", None, False, False),
        Param("indices", "Any", None, False, False),
        Param("value", "Tensor", None, False, False),
    ),
}


@functools.lru_cache(maxsize=1)
def table() -> dict[str, list[dict]]:
    """flambeau.ops_table() indexed by operator name (read once)."""
    rows: dict[str, list[dict]] = {}
    for row in flambeau.ops_table():
        rows.setdefault(row["name"], []).append(row)
    return rows


@functools.cache
def overloads(name: str) -> tuple[Schema, ...]:
    """Schemas of an operator (or of the functional form of an in-place ``name_``)."""
    if name in INDEXING:
        return (Schema(name, "", INDEXING[name], 1),)
    rows = table().get(name) or (table().get(name[:-1], []) if name.endswith("_") else [])
    return tuple(_from_row(r) for r in rows)


def _fits(p: Param, v) -> bool:
    t = p.type.rstrip("?")
    if t == "Any":
        return True
    if v is None:
        return p.type.endswith("?") or (p.has_default and p.default is None)
    if t == "Tensor":
        return isinstance(v, (flambeau.Tensor, int, float, complex, bool))
    if t == "Tensor[]":
        return isinstance(v, (list, tuple)) and all(isinstance(x, flambeau.Tensor) for x in v)
    if t == "Scalar[]":
        return isinstance(v, (list, tuple))
    if t == "Scalar" and isinstance(v, (list, tuple)):
        return False  # _foreach_add(xs, ys) is the list overload, not the scalar one
    if t == "bool":
        return isinstance(v, bool)  # as the core's parser: std_mean(x, 0) takes a dim
    if t == "Scalar" and isinstance(v, flambeau.Tensor):
        # As in PyTorch, a tensor stands for a number only when it is 0-dim and needs no
        # gradient; otherwise the call binds to the overload taking a Tensor.
        return v.dim() == 0 and not v.requires_grad
    if t == "int":
        return isinstance(v, int) and not isinstance(v, flambeau.Tensor)
    if t.startswith("int["):
        return isinstance(v, (int, list, tuple))
    return True


@functools.cache
def _simple(name: str):
    """(schema, positional names, defaults) when the operator has a single overload."""
    schemas = overloads(name)
    if len(schemas) != 1:
        return None
    s = schemas[0]
    pos = [p for p in s.params if not p.kwonly]
    if len(pos) > 1 and pos[-1].is_tensor_list:  # einsum('ij', a): binds through _try_bind
        return None
    positional = tuple(p.name for p in s.params if not p.kwonly)
    defaults = {p.name: p.default for p in s.params if p.has_default}
    return s, positional, defaults


def bind(name: str, args: tuple, kwargs: dict) -> tuple[Schema, dict]:
    """(schema, {param: value}) for the first overload the call fits."""
    simple = _simple(name)
    if simple is not None and not kwargs and len(args) == len(simple[1]):
        # The common case, e.g. a + b: the core has already parsed this very call.
        schema, names, defaults = simple
        bound = dict(zip(names, args))  # schema order: formulas rely on it
        for k, v in defaults.items():
            bound.setdefault(k, v)
        return schema, bound
    for schema in overloads(name):
        bound = _try_bind(schema, args, kwargs)
        if bound is not None:
            return schema, bound
    raise RuntimeError(f"autograd: cannot bind the arguments of a call to '{name}'")


def _is_tensor(v) -> bool:
    return isinstance(v, flambeau.Tensor)


def _try_bind(schema: Schema, args, kwargs):
    params = schema.params
    positional = [p for p in params if not p.kwonly]
    bound = {}
    n = len(positional) - 1
    varargs = n > 0 and positional[-1].is_tensor_list and not positional[0].is_tensor_list
    if varargs and len(args) > n and all(map(_is_tensor, args[n:])):
        args = tuple(args[:n]) + (tuple(args[n:]),)  # einsum('ij,jk', a, b): trailing tensors
    if len(args) > len(positional):
        # zeros(2, 3)-style varargs for a leading int list (not of bools: std_mean(x, 0,
        # False) is the overload taking unbiased)
        first = 1 if len(positional) > 1 and params[0].is_tensor else 0
        if (
            positional
            and positional[min(len(positional) - 1, 1)].type.startswith("int[")
            and not any(isinstance(v, bool) for v in args[first:])
        ):
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
