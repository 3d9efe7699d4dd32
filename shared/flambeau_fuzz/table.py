"""The operator table, as the fuzzer sees it: parameters with parsed types, and the
Python spellings (call forms) under which each operator can be reached."""

from __future__ import annotations

import re
from dataclasses import dataclass

# "int[2]?", "Tensor?[]", "Scalar", ...: base type, optional element, list, optional list.
_TYPE = re.compile(r"^(\w+)(\?)?(?:\[(\d*)\])?(\?)?$")


@dataclass(frozen=True)
class Param:
    name: str
    base: str  # Tensor, int, float, Scalar, bool, str, ScalarType, Device, Generator, ...
    optional: bool  # None is accepted
    list_size: int | None  # None: not a list; 0: any length; N: int[N] (one int stands for N)
    none_elements: bool  # Tensor?[]: elements may be None
    default: str | None  # the schema's default, as written
    kwonly: bool

    @property
    def has_default(self) -> bool:
        return self.default is not None


@dataclass(frozen=True)
class Op:
    name: str  # the Python name: add, linalg_svd, _foreach_add_
    overload: str  # "" or the suffix after the dot in the schema
    category: str
    params: tuple[Param, ...]
    variants: tuple[str, ...]  # function, method, inplace, out
    dunders: tuple[str, ...]
    n_outputs: int

    @property
    def key(self) -> str:
        """The name the summary and the findings use: name.overload."""
        return f"{self.name}.{self.overload}" if self.overload else self.name

    def forms(self) -> list[str]:
        """How the operator can be called: function, method, inplace, out, or a dunder name."""
        forms = [v for v in self.variants if v in ("function", "method", "inplace", "out")]
        tensor_first = bool(self.params) and self.params[0].base == "Tensor"
        if not tensor_first or self.params[0].list_size is not None:
            forms = [f for f in forms if f not in ("method", "inplace")]
        return forms + [d for d in self.dunders if tensor_first]


def parse_param(row: dict) -> Param:
    m = _TYPE.match(row["type"])
    if not m:
        raise ValueError(f"unknown parameter type {row['type']!r}")
    base, elem_opt, size, list_opt = m.groups()
    is_list = "[" in row["type"]
    default = row["default"]
    return Param(
        name=row["name"],
        base=base,
        optional=bool(list_opt) or (bool(elem_opt) and not is_list) or default == "None",
        list_size=(int(size) if size else 0) if is_list else None,
        none_elements=is_list and bool(elem_opt),
        default=default,
        kwonly=bool(row["kwonly"]),
    )


def load_ops(rows: list[dict]) -> list[Op]:
    """flambeau.ops_table() rows as Op records, in table order."""
    return [
        Op(
            name=r["name"],
            overload=r["overload"],
            category=r["category"],
            params=tuple(parse_param(p) for p in r["params"]),
            variants=tuple(r["variants"]),
            dunders=tuple(r["dunders"]),
            n_outputs=int(r["n_outputs"]),
        )
        for r in rows
    ]


def select_ops(rows: list[dict], pattern: str | None) -> list[Op]:
    """load_ops(rows), only the operators whose name or name.overload fully matches the
    regex `pattern` (all of them without one). Raises ValueError when none does, so a
    mistyped --ops fails at once instead of every worker failing on its first call."""
    ops = load_ops(rows)
    if not pattern:
        return ops
    regex = re.compile(pattern)
    chosen = [op for op in ops if regex.fullmatch(op.key) or regex.fullmatch(op.name)]
    if not chosen:
        raise ValueError(f"--ops {pattern!r} matches no operator's name or name.overload")
    return chosen
