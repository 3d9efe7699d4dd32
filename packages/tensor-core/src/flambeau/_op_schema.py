"""Operator schemas in PyTorch's syntax, for flambeau.library's custom operators.

``"mylib::myadd(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor"`` parses into a
``FunctionSchema``, which binds a call's arguments (positional, keyword, defaults) and
checks their types, and which ``custom_op`` infers from a function's annotations.
"""

from __future__ import annotations

import ast
import collections.abc
import inspect
import re
import types
import typing
from dataclasses import dataclass

# Argument types a schema may name (after removing "?", "[]"/"[N]" and alias marks).
_BASE_TYPES = frozenset(
    {"Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Device",
     "Layout", "MemoryFormat", "Generator", "Any"}
)  # fmt: skip
_NAME = r"[A-Za-z_]\w*"


@dataclass(frozen=True)
class Argument:
    name: str
    type: str  # as written, without alias annotations: "Tensor?", "int[2]", "float"
    default: str | None  # the default as written in the schema, or None
    kwonly: bool
    mutable: bool  # written with an alias annotation ending in "!": Tensor(a!)

    @property
    def optional(self) -> bool:
        return self.type.endswith("?")

    @property
    def base(self) -> str:
        """ "Tensor" for "Tensor?", "int" for "int[2]" and "int[]"."""
        return re.sub(r"\[\d*\]", "", self.type.rstrip("?"))

    @property
    def is_list(self) -> bool:
        return "[" in self.type

    @property
    def is_tensor_like(self) -> bool:
        return self.base == "Tensor"

    def default_value(self):
        return _literal(self.default)


@dataclass(frozen=True)
class FunctionSchema:
    namespace: str
    name: str
    overload: str
    arguments: tuple[Argument, ...]
    returns: tuple[str, ...]  # return types; () for "-> ()"
    text: str  # the schema as given, namespace included

    @property
    def qualname(self) -> str:
        return f"{self.namespace}::{self.name}"

    @property
    def positional(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.kwonly)

    def bind(self, args: tuple, kwargs: dict) -> tuple[list, dict]:
        """(positional values, keyword-only values) in schema order, defaults filled in.

        TypeError, as for a built-in, for a missing, unexpected or ill-typed argument.
        """
        positional = self.positional
        if len(args) > len(positional):
            raise TypeError(
                f"{self.qualname}() takes {len(positional)} positional argument(s) but "
                f"{len(args)} were given"
            )
        names = {a.name for a in self.arguments}
        if unexpected := [k for k in kwargs if k not in names]:
            raise TypeError(
                f"{self.qualname}() got an unexpected keyword argument {unexpected[0]!r}"
            )
        values = {}
        for arg, value in zip(positional, args):
            if arg.name in kwargs:
                raise TypeError(f"{self.qualname}() got multiple values for argument {arg.name!r}")
            values[arg.name] = value
        for arg in self.arguments:
            if arg.name in values:
                continue
            if arg.name in kwargs:
                values[arg.name] = kwargs[arg.name]
            elif arg.default is not None:
                values[arg.name] = arg.default_value()
            else:
                raise TypeError(f"{self.qualname}() missing required argument {arg.name!r}")
            _check_type(self.qualname, arg, values[arg.name])
        for arg, value in zip(positional, args):
            _check_type(self.qualname, arg, value)
        return (
            [values[a.name] for a in positional],
            {a.name: values[a.name] for a in self.arguments if a.kwonly},
        )


def parse(schema: str, namespace: str | None = None) -> FunctionSchema:
    """Parses a schema; `namespace` is used when the schema's name has none (Library.define)."""
    text = schema.strip()
    m = re.fullmatch(
        rf"((?:{_NAME}::)?)({_NAME})(?:\.({_NAME}))?\s*\((.*)\)\s*->\s*(.+)", text, re.S
    )
    if not m:
        raise RuntimeError(
            f"Schema parsing failed: expected 'ns::name(args) -> returns', got {schema!r}"
        )
    ns, name, overload, body, returns = m.groups()
    ns = ns[:-2] if ns else namespace
    if not ns:
        raise RuntimeError(f"Schema {schema!r} has no namespace: write it as 'mylib::{name}(...)'")
    if namespace is not None and ns != namespace:
        raise ValueError(
            f"The namespace {ns!r} of the schema {schema!r} is not the library's "
            f"namespace {namespace!r}"
        )
    arguments, kwonly = [], False
    for piece in _split_top_level(body):
        if piece == "*":
            kwonly = True
            continue
        arguments.append(_parse_argument(piece, kwonly, schema))
    seen = set()
    for a in arguments:
        if a.name in seen:
            raise RuntimeError(f"Schema {schema!r} names the argument {a.name!r} twice")
        seen.add(a.name)
    full = text if m.group(1) else f"{ns}::{text}"
    return FunctionSchema(
        ns, name, overload or "", tuple(arguments), _parse_returns(returns, schema), full
    )


def _split_top_level(body: str) -> list[str]:
    pieces, depth, cur = [], 0, ""
    for ch in body:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            pieces.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        pieces.append(cur.strip())
    return pieces


def _parse_argument(piece: str, kwonly: bool, schema: str) -> Argument:
    decl, eq, default = piece.partition("=")
    m = re.fullmatch(rf"({_NAME})(\(\w+!?\))?((?:\[\d*\])?\??)\s+({_NAME})", decl.strip())
    if not m or m.group(1) not in _BASE_TYPES:
        raise RuntimeError(f"Schema {schema!r}: cannot parse the argument {piece!r}")
    base, alias, suffix, name = m.groups()
    default = default.strip() if eq else None
    if default is not None:
        try:
            _literal(default)
        except (ValueError, SyntaxError):
            raise RuntimeError(
                f"Schema {schema!r}: bad default value {default!r} for {name!r}"
            ) from None
    return Argument(name, base + suffix, default, kwonly, bool(alias and alias.endswith("!)")))


def _parse_returns(text: str, schema: str) -> tuple[str, ...]:
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        parts = _split_top_level(text[1:-1])
    else:
        parts = [text]
    out = []
    for part in parts:
        typ = part.split()[0]  # "Tensor" of a named return "Tensor out"
        typ = re.sub(r"\(\w+!?\)", "", typ)
        if re.sub(r"\[\d*\]|\?", "", typ) not in _BASE_TYPES:
            raise RuntimeError(f"Schema {schema!r}: cannot parse the return type {part!r}")
        out.append(typ)
    return tuple(out)


def _literal(text: str | None):
    if text is None:
        return None
    return ast.literal_eval(text)


def _is_tensor(value) -> bool:
    import flambeau

    return isinstance(value, flambeau.Tensor)


_SCALAR_CHECKS = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "SymInt": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "Scalar": lambda v: isinstance(v, (bool, int, float, complex)),
    "Tensor": _is_tensor,
}


def _check_type(op: str, arg: Argument, value) -> None:
    if value is None and arg.optional:
        return
    check = _SCALAR_CHECKS.get(arg.base)
    if check is None:
        return  # ScalarType, Device, ...: passed through to the kernel as given
    if arg.is_list:
        ok = isinstance(value, (list, tuple)) and all(check(v) for v in value)
    else:
        ok = check(value)
    if not ok:
        raise TypeError(
            f"{op}(): argument '{arg.name}' must be {arg.type}, not {type(value).__name__}"
        )


# --- inference from annotations (custom_op without schema=) -------------------------

_ANNOTATION_TYPES = {int: "int", float: "float", bool: "bool", str: "str"}


def _annotation_type(annotation, what: str) -> str:
    import flambeau

    if annotation is flambeau.Tensor:
        return "Tensor"
    if annotation in _ANNOTATION_TYPES:
        return _ANNOTATION_TYPES[annotation]
    origin, params = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType) and len(params) == 2 and type(None) in params:
        inner = params[0] if params[1] is type(None) else params[1]
        return _annotation_type(inner, what) + "?"
    if origin in (list, tuple, collections.abc.Sequence):
        if origin is tuple and len(params) == 2 and params[1] is Ellipsis:
            params = params[:1]
        if len(params) == 1:
            return _annotation_type(params[0], what) + "[]"
    raise ValueError(f"custom_op: unsupported type annotation {annotation!r} for {what}")


def infer_schema(fn, mutates_args) -> str:
    """The schema of fn's arguments and result, without its name:
    "(Tensor x, float a=1.0) -> Tensor"."""
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception as e:  # a forward reference that does not resolve
        raise ValueError(f"custom_op: cannot read the type annotations of {fn!r}: {e}") from None
    mutated = set(mutates_args) if mutates_args != "unknown" else set()
    if unknown := mutated - set(signature.parameters):
        raise ValueError(f"custom_op: mutates_args names {sorted(unknown)} that are not arguments")
    params, kwonly_seen = [], False
    for i, (name, p) in enumerate(signature.parameters.items()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError("custom_op: *args and **kwargs are not supported in a custom operator")
        if name not in hints:
            raise ValueError(f"custom_op: the parameter {name!r} has no type annotation")
        typ = _annotation_type(hints[name], f"the parameter {name!r}")
        if name in mutated:
            if not typ.startswith("Tensor"):
                raise ValueError(f"custom_op: mutated argument {name!r} is not a Tensor")
            typ = typ.replace("Tensor", f"Tensor(a{i}!)", 1)
        if p.kind is p.KEYWORD_ONLY and not kwonly_seen:
            params.append("*")
            kwonly_seen = True
        decl = f"{typ} {name}"
        if p.default is not inspect.Parameter.empty:
            decl += f"={p.default!r}"
        params.append(decl)
    ret = hints.get("return", inspect.Signature.empty)
    if ret is inspect.Signature.empty:
        raise ValueError("custom_op: the function has no return type annotation")
    if ret is None or ret is type(None):
        returns = "()"
    elif typing.get_origin(ret) is tuple:
        returns = (
            "(" + ", ".join(_annotation_type(r, "the result") for r in typing.get_args(ret)) + ")"
        )
    else:
        returns = _annotation_type(ret, "the result")
    return f"({', '.join(params)}) -> {returns}"
