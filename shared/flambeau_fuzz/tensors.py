"""Tensors for generated calls: values, dtypes and memory layouts, as setup source lines.

A tensor is built contiguous and then, often, turned into a view with the layout
under test: transposed, strided (every other element, or an offset), expanded
(stride 0), overlapping (as_strided windows), channels-last, or a lazy conjugate.
"""

from __future__ import annotations

import math
import random

from .values import COMPLEX, FLOATS, dtype_expr, element, render

LITERAL_MAX = 64  # up to this many elements the values are written out in the source
HUGE_NUMEL = 1 << 24  # beyond this a tensor can only be a stride-0 view of one element
LAYOUTS = ("contiguous", "transposed", "strided", "offset", "expanded", "overlapping",
           "channels_last", "conj")  # fmt: skip
LAYOUT_WEIGHTS = (58, 10, 8, 4, 8, 5, 4, 3)


class Setup:
    """The setup lines of one call and its fresh variable names."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []
        self._count = 0

    def assign(self, expr: str, prefix: str = "t") -> str:
        name = f"{prefix}{self._count}"
        self._count += 1
        self.lines.append(f"{name} = {expr}")
        return name

    def seed(self) -> int:
        return self.rng.randrange(1 << 16)


def numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _layout(rng: random.Random, shape: tuple[int, ...], dtype: str) -> str:
    layout = rng.choices(LAYOUTS, LAYOUT_WEIGHTS)[0]
    n = len(shape)
    if layout == "transposed" and n < 2:
        return "contiguous"
    if layout in ("strided", "offset", "expanded", "overlapping") and (n == 0 or not numel(shape)):
        return "contiguous"
    if layout == "channels_last" and n not in (4, 5):
        return "contiguous"
    if layout == "conj" and dtype not in COMPLEX:
        return "contiguous"
    return layout


def _view(rng: random.Random, shape: tuple[int, ...], layout: str) -> tuple[tuple, str]:
    """The contiguous shape to build, and the source that turns it into `shape`."""
    n = len(shape)
    if layout == "transposed":
        perm = list(range(n))
        while perm == sorted(perm):
            rng.shuffle(perm)
        base = [0] * n
        for i, p in enumerate(perm):
            base[p] = shape[i]
        suffix = ".transpose(-1, -2)" if perm == [*range(n - 2), n - 1, n - 2] else \
            f".permute({render(tuple(perm))})"  # fmt: skip
        return tuple(base), suffix
    if layout == "strided":  # every other element along one dimension
        d = rng.randrange(n)
        base = list(shape)
        base[d] = 2 * shape[d]
        index = ", ".join(["::2" if i == d else ":" for i in range(n)])
        return tuple(base), f"[{index}]"
    if layout == "offset":  # a nonzero storage offset
        return (shape[0] + 1, *shape[1:]), "[1:]"
    if layout == "expanded":
        base = tuple(1 if rng.random() < 0.5 else s for s in shape)
        if base == shape:
            base = (1, *shape[1:])
        return base, f".expand({render(shape)})"
    if layout == "overlapping":  # windows that share elements: strides smaller than sizes
        strides = tuple(rng.choice((0, 1, 1, 2)) for _ in shape)
        span = 1 + sum((s - 1) * st for s, st in zip(shape, strides))
        return (span,), f".as_strided({render(shape)}, {render(strides)})"
    if layout == "channels_last":
        fmt = "channels_last" if n == 4 else "channels_last_3d"
        return shape, f".contiguous(memory_format=flambeau.{fmt})"
    if layout == "conj":
        return shape, ".conj()"
    return shape, ""


def values_expr(
    setup: Setup, shape: tuple, dtype: str, *, edgy: bool = False, bounds: tuple | None = None
) -> str:
    """A fresh contiguous tensor of `shape` and `dtype`; `bounds` [lo, hi) for index tensors."""
    rng, n = setup.rng, numel(shape)
    if n <= LITERAL_MAX or (edgy and n <= 8 * LITERAL_MAX):
        if bounds is not None:
            lo, hi = bounds
            flat = [rng.randrange(lo, hi) if hi > lo else lo for _ in range(n)]
        else:
            flat = [element(rng, dtype, edgy) for _ in range(n)]
        if not shape:
            return f"flambeau.tensor({render(flat[0])}, dtype={dtype_expr(dtype)})"
        made = f"flambeau.tensor({render(flat)}, dtype={dtype_expr(dtype)})"
        return made if len(shape) == 1 else f"{made}.reshape({render(tuple(shape))})"
    gen = f"generator=flambeau.Generator().manual_seed({setup.seed()})"
    if bounds is not None or dtype not in (*FLOATS, *COMPLEX):
        lo, hi = bounds if bounds is not None else ((0, 2) if dtype == "bool" else (-5, 10))
        lo, hi = (lo, hi) if hi > lo else (lo, lo + 1)
        made = f"flambeau.randint({lo}, {hi}, {render(tuple(shape))}, {gen})"
    else:
        made = f"flambeau.randn({render(tuple(shape))}, {gen}, dtype=flambeau.float64)"
    return f"{made}.to({dtype_expr(dtype)})"


def make_tensor(
    setup: Setup,
    shape: tuple,
    dtype: str,
    *,
    edgy: bool = False,
    bounds: tuple | None = None,
    layout: str | None = None,
    sort: bool = False,
    suffix: str = "",
) -> str:
    """A variable holding a tensor of `shape` and `dtype`, in a random (or given) layout;
    `suffix` maps its values into a domain (before the layout's view is taken)."""
    shape = tuple(shape)
    if numel(shape) > HUGE_NUMEL:  # only a view of a single element can be this large
        base = setup.assign(values_expr(setup, (1,) * len(shape), dtype, edgy=edgy, bounds=bounds))
        return setup.assign(f"{base}.expand({render(shape)})")
    layout = layout or _layout(setup.rng, shape, dtype)
    base_shape, view = _view(setup.rng, shape, layout)
    made = values_expr(setup, base_shape, dtype, edgy=edgy, bounds=bounds)
    if sort and shape and numel(shape):
        made = f"{made}.sort(-1).values"
    return setup.assign(made + suffix + view)
