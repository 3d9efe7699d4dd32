"""Leaf values for generated calls, rendered as Python source.

Every value is produced as the text of an expression, so that the call the worker
runs and the reproducer a finding gets are the same program. Three flavours:
realistic (what a user would pass), edgy (legal but extreme: NaN, 2**63-1, empty)
and hostile (the wrong type altogether).
"""

from __future__ import annotations

import math
import random

DTYPES = (
    "bool", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    # PyTorch's dtypes of limited support: most operators must refuse them cleanly.
    "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e8m0fnu", "complex32", "uint4", "int2", "bits16",
)  # fmt: skip
# Mostly float32/float64, the dtypes real programs use, but every dtype often enough.
DTYPE_WEIGHTS = (4, 3, 3, 2, 4, 9, 3, 3, 30, 12, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
FLOATS = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128", "complex32")
INT_RANGE = {
    "uint8": (0, 255),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "int8": (-128, 127),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}

# Integers around the limits of int32, int64 and uint64, and negatives.
INT_EDGES = (
    -1, 0, 2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64,
    -(2**31) - 1, -(2**62), -(2**63), -(2**63) - 1,
)  # fmt: skip
FLOAT_EDGES = (
    math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, -1e308, 3.4e38, 1e38, 5e-324,
    1e-45, 65504.0, 65520.0, 2.0**24 + 1, -1.0,
)  # fmt: skip
# The wrong type for almost any parameter. Python numbers are legal Tensors, so
# containers, strings and objects are here too.
HOSTILE = (
    "None", "'x'", "''", "[1, 2]", "[]", "1.5", "-1", "2**64", "True", "complex(1, 1)",
    "object()", "{}", "b'ab'", "flambeau.tensor(2)", "flambeau.zeros(2, 2)",
    "flambeau.float32", "[flambeau.zeros(1), None]", "(None,)", "float('nan')",
)  # fmt: skip


def render_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def render(x: object) -> str:
    """Source text for a number, a bool, None or a (nested) list of them."""
    if isinstance(x, bool) or x is None or isinstance(x, int | str):
        return repr(x)
    if isinstance(x, float):
        return render_float(x)
    if isinstance(x, complex):
        return f"complex({render_float(x.real)}, {render_float(x.imag)})"
    if isinstance(x, list):
        return "[" + ", ".join(render(v) for v in x) + "]"
    if isinstance(x, tuple):
        return "(" + ", ".join(render(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    raise TypeError(f"cannot render {type(x).__name__}")


def dtype_expr(name: str) -> str:
    return f"flambeau.{name}"


def pick_dtype(rng: random.Random) -> str:
    return rng.choices(DTYPES, DTYPE_WEIGHTS)[0]


def element(rng: random.Random, dtype: str, edgy: bool) -> object:
    """One value for a tensor of `dtype`; edgy ones sit at the type's limits or are NaN/inf."""
    if dtype == "bool":
        return rng.random() < 0.5
    if dtype in INT_RANGE:
        lo, hi = INT_RANGE[dtype]
        if edgy and rng.random() < 0.5:
            return rng.choice((lo, hi, 0, max(lo, -1)))
        return rng.randint(max(lo, -5), 9)
    if edgy and rng.random() < 0.5:
        value = rng.choice(FLOAT_EDGES)
    else:
        value = round(rng.gauss(0.0, 2.0), 3)
    if dtype in COMPLEX:
        imag = rng.choice(FLOAT_EDGES) if edgy and rng.random() < 0.3 else round(rng.gauss(0, 1), 3)
        return complex(value, imag)
    return value


def python_scalar(rng: random.Random, edgy: bool) -> object:
    """A Python number for a Scalar parameter."""
    if edgy:
        return rng.choice((*FLOAT_EDGES, *INT_EDGES, True, complex(math.nan, 1.0)))
    kind = rng.random()
    if kind < 0.45:
        return rng.randint(-3, 5)
    if kind < 0.9:
        return round(rng.uniform(-3.0, 3.0), 2)
    if kind < 0.95:
        return rng.random() < 0.5
    return complex(round(rng.uniform(-2, 2), 2), round(rng.uniform(-2, 2), 2))


def edgy_int(rng: random.Random) -> int:
    return rng.choice(INT_EDGES)


def edgy_float(rng: random.Random) -> float:
    return rng.choice(FLOAT_EDGES)


def hostile(rng: random.Random) -> str:
    return rng.choice(HOSTILE)
