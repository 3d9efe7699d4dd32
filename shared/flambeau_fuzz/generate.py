"""Calls generated from the operator table's schemas.

Call `index` of seed `seed` is a pure function of (seed, index, table): a worker
that dies mid-call costs nothing to explain, since the call can be made again.
A call is Python source (setup lines and one call expression), so the reproducer
of a finding is the very program that ran.

Most calls are realistic-but-edgy, so that they get past argument checks into the
kernels: the tensors of one call share a base shape and dtype, and family hints
(hints.py) make shapes agree where the operator needs them to. Each parameter is
then sometimes edgy (NaN, 2**63, an empty or huge shape), and a share of calls get
one hostile argument (a wrong type).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from keyword import iskeyword

from . import hints
from .table import Op, Param
from .tensors import HUGE_NUMEL, Setup, make_tensor, numel
from .values import (
    COMPLEX,
    DTYPES,
    dtype_expr,
    edgy_float,
    edgy_int,
    hostile,
    pick_dtype,
    python_scalar,
    render,
)

EDGY_RATE = 0.08  # per parameter
HOSTILE_RATE = 0.1  # per call: one parameter gets a value of the wrong type
OMIT_DEFAULT_RATE = 0.4  # a parameter with a default is left out
KEYWORD_RATE = 0.15  # a positional parameter is passed by name
PARALLEL_RATE = 0.1  # the call runs on two threads (workers otherwise run single-threaded)

# Arguments that make an operator legitimately slow or huge, in PyTorch too (e.g.
# tensor_split(2**31 - 1) returns 2**31 views): values above the limit but still in
# int64 are clamped to it; overflowing and negative values are kept.
SLOW_INT_LIMITS = {("tensor_split", "indices_or_sections"): 1 << 12}

PREAMBLE = 'import flambeau\ninf, nan = float("inf"), float("nan")\n'

DIM_NAMES = {"dim", "dim0", "dim1", "dim2", "axis", "axis0", "axis1", "dimension", "start_dim",
             "end_dim", "source", "destination", "dims", "dims_a", "dims_b"}  # fmt: skip
INDEX_TENSORS = {"index", "indices", "target", "targets", "offsets", "offset2bag", "bag_size",
                 "maximum_indices", "pivots", "sorter", "input_lengths", "target_lengths",
                 "philox_seed", "philox_offset"}  # fmt: skip
BOOL_TENSORS = {"mask", "condition"}
# Realistic ranges [lo, hi] of int parameters by name; others get [0, 4].
INT_RANGES = {
    "k": (0, 4), "n": (0, 4), "num_samples": (1, 6), "steps": (0, 10), "bins": (1, 10),
    "minlength": (0, 10), "chunks": (1, 4), "split_size_or_sections": (1, 4),
    "indices_or_sections": (1, 4), "num_weights": (1, 10), "high": (1, 10), "low": (-5, 0),
    "N": (1, 3), "C": (1, 4), "HxW": (1, 6), "group": (1, 2), "num_groups": (1, 2),
    "groups": (1, 2), "blank": (0, 2), "reduction": (0, 2), "mode": (0, 2),
    "padding_idx": (-1, 3), "ignore_index": (-1, 3), "offset": (-2, 2), "diagonal": (-2, 2),
    "start": (0, 3), "length": (0, 3), "index": (-2, 2), "step": (1, 3), "decimals": (-2, 3),
    "divisor_override": (1, 4), "m": (0, 5), "to": (1, 100), "from": (0, 5),
    "storage_offset": (0, 3), "size": (1, 3), "kernel_size": (1, 3), "stride": (1, 2),
    "padding": (0, 1), "dilation": (1, 2), "output_padding": (0, 0), "shifts": (-3, 3),
    "pad": (0, 2), "output_mask": (0, 1), "output_size": (1, 5), "repeats": (1, 3),
}  # fmt: skip
FLOAT_CHOICES = {
    "p": (0.0, 0.2, 0.5, 1.0), "dropout_p": (0.0, 0.0, 0.3), "eps": (1e-5, 1e-3),
    "momentum": (0.1, 0.5), "rtol": (1e-5, 1e-3), "atol": (1e-8, 1e-3), "lambd": (0.5, 1.0),
    "beta": (1.0, 0.5, 2.0), "delta": (1.0, 0.5), "scale": (None, 0.5, 2.0),
    "label_smoothing": (0.0, 0.1), "mean": (0.0, 1.0), "std": (1.0, 0.5), "base": (10.0, 2.0),
    "from": (0.0, -1.0), "to": (1.0, 3.0), "median": (0.0,), "sigma": (1.0,),
    "rcond": (None, 1e-5), "scales": (None, None, 2.0), "scales_d": (None, None, 1.5),
    "scales_h": (None, None, 0.5), "scales_w": (None, None, 2.0), "value": (None, 0.0, 1.5),
}  # fmt: skip
STR_CHOICES = {
    "UPLO": ("L", "U"), "approximate": ("none", "tanh"), "ord": ("fro", "nuc"),
    "p": ("fro", "nuc"), "padding": ("valid", "same"), "indexing": (None, "ij", "xy"),
    "rounding_mode": (None, "trunc", "floor"), "side": (None, "left", "right"),
    "reduce": ("sum", "prod", "mean", "amax", "amin", "add", "multiply"),
    "driver": (None, "gelsy", "gelsd", "gelss", "gels", "gesvd", "gesvdj"),
    "mode": ("constant", "reflect", "replicate", "circular", "reduced", "complete", "r"),
    "equation": ("ij,jk->ik", "i,i->", "ii->i", "ij->ji", "...ij->...ji", "bij,bjk->bik"),
}  # fmt: skip
SCALAR_CHOICES = {"alpha": (1, 2, 0.5, -1), "value": (1, 0.5, 2), "ord": (1, 2, -1, 0, 3.5)}


@dataclass
class Case:
    """One generated call: enough to run it and to write its reproducer."""

    seed: int
    index: int
    op: str  # the table's name.overload
    form: str  # function, method, inplace, out, or a dunder name
    setup: list[str]
    call: str
    hostile: str = ""  # the parameter that got a wrong-typed value

    def program(self, consume: bool = False) -> str:
        lines = [PREAMBLE.rstrip("\n"), f"flambeau.manual_seed({self.index % 65536})"]
        lines += self.setup
        lines.append(f"result = {self.call}")
        if consume:
            lines.append(CONSUME)
        return "\n".join(lines) + "\n"


# Reading every output forces the views an operator returns to be walked: a view
# past the end of its storage shows up here rather than in a later program.
CONSUME = """\
def consume(r):
    if isinstance(r, (tuple, list)):
        for x in r:
            consume(x)
    elif isinstance(r, flambeau.Tensor):
        import math
        assert math.prod(r.shape) == r.numel() < 2**63, f"bad shape {tuple(r.shape)}"
        if 0 < r.numel() <= 1 << 20:  # an empty result has nothing to read
            r.clone()
consume(result)"""


@dataclass
class Ctx:
    """What the parameters of one call are generated from."""

    rng: random.Random
    setup: Setup
    op: Op
    shape: tuple
    dtype: str
    plan: hints.Plan = field(default_factory=hints.Plan)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def edgy(self) -> bool:
        return self.rng.random() < EDGY_RATE


def base_shape(rng: random.Random) -> tuple:
    ndim = rng.choices((0, 1, 2, 3, 4, 5, 6), (7, 22, 30, 22, 13, 4, 2))[0]
    sizes = (0, 1, 2, 3, 4, 5, 7, 8, 16, 33)
    weights = (4, 18, 16, 16, 12, 10, 8, 6, 3, 2)
    return tuple(rng.choices(sizes, weights)[0] for _ in range(ndim))


def edgy_shape(rng: random.Random, shape: tuple) -> tuple:
    """A shape that is empty, 0-dim, or huge (only a stride-0 view can be that large)."""
    kind = rng.randrange(4)
    if kind == 0:
        return ()
    if kind == 1:
        return tuple(0 if rng.random() < 0.5 else s for s in shape) or (0,)
    if kind == 2 or rng.random() < 0.8:  # empty along a random dimension
        return (*shape, 0) if not shape else tuple(0 if i == 0 else s for i, s in enumerate(shape))
    # Just past 2**31 elements: where 32-bit index arithmetic breaks. Larger would only
    # be slow (an operator must visit every element, in PyTorch too).
    return rng.choice(((2**31 + 1,), (2**16 + 1, 2**15 + 1), (1, 2**31 + 1)))


def tensor_arg(ctx: Ctx, p: Param) -> str:
    rng, plan = ctx.rng, ctx.plan
    shape = tuple(plan.shapes.get(p.name, ctx.shape))
    if p.name not in plan.shapes and rng.random() < 0.1 and shape:  # broadcast against it
        shape = tuple(1 if rng.random() < 0.5 else s for s in shape[rng.randrange(len(shape)) :])
    edgy = ctx.edgy()
    if edgy and rng.random() < 0.3:
        shape = edgy_shape(rng, shape)
    bounds = plan.bounds.get(p.name)
    if p.name in plan.dtypes:
        dtype = plan.dtypes[p.name]
    elif bounds is not None or (p.name in INDEX_TENSORS and p.name not in plan.shapes):
        dtype = "int64" if rng.random() < 0.9 else rng.choice(("int32", "int16", "float32"))
        if bounds is None:
            bounds = (0, max(1, min(ctx.shape, default=1)))
    elif p.name in BOOL_TENSORS:
        dtype = "bool" if rng.random() < 0.9 else pick_dtype(rng)
    else:
        dtype = ctx.dtype if rng.random() < 0.85 else pick_dtype(rng)
    if p.name in plan.sorted and dtype in COMPLEX:  # complex numbers have no order
        dtype = "float32"
    if numel(shape) > HUGE_NUMEL:  # one byte per element keeps a pass over it to seconds
        dtype = rng.choice(("bool", "uint8", "int8"))
    if bounds is not None and edgy:  # indices past either end
        lo, hi = bounds
        bounds = rng.choice(
            ((hi, hi + 3), (-hi - 3, -hi), (2**31, 2**31 + 1), (-(2**62), -(2**62) + 1))
        )
    return make_tensor(
        ctx.setup,
        shape,
        dtype,
        edgy=edgy,
        bounds=bounds,
        sort=p.name in plan.sorted,
        suffix=plan.suffix.get(p.name, "") if not edgy else "",
    )


def tensor_list_arg(ctx: Ctx, p: Param) -> str:
    rng, shapes = ctx.rng, ctx.plan.shapes.get(p.name)
    if shapes is None:
        shapes = [ctx.shape] * rng.randint(1, 3)
        if rng.random() < 0.05:
            shapes = []
    items = []
    for s in shapes:
        if p.none_elements and (s is None or rng.random() < 0.1):
            items.append("None")
            continue
        fake = Param(p.name, "Tensor", False, None, False, None, False)
        sub = Ctx(rng, ctx.setup, ctx.op, ctx.shape, ctx.dtype, ctx.plan)
        sub.plan = hints.Plan(
            shapes={p.name: s},
            dtypes={p.name: ctx.plan.dtypes[p.name]} if p.name in ctx.plan.dtypes else {},
            bounds=ctx.plan.bounds,
        )
        items.append(tensor_arg(sub, fake))
    return "[" + ", ".join(items) + "]"


def int_value(ctx: Ctx, name: str) -> int:
    rng = ctx.rng
    if name in DIM_NAMES:
        return rng.randint(-ctx.ndim, ctx.ndim - 1) if ctx.ndim else rng.choice((0, -1))
    lo, hi = INT_RANGES.get(name, (0, 4))
    return rng.randint(lo, hi)


def int_list_value(ctx: Ctx, p: Param) -> object:
    rng = ctx.rng
    if p.list_size and rng.random() < 0.3:  # int[N] accepts one int for all N
        return int_value(ctx, p.name)
    if p.name in ("size", "shape", "sizes", "normalized_shape", "input_size"):
        return list(ctx.shape if rng.random() < 0.7 else base_shape(rng))
    if p.name in ("dims", "dim") and p.list_size != 1:
        dims = list(range(ctx.ndim))
        rng.shuffle(dims)
        return dims[: rng.randint(0, ctx.ndim)] if p.list_size is not None else dims
    count = p.list_size or rng.randint(0, max(1, ctx.ndim))
    return [int_value(ctx, p.name) for _ in range(count)]


def edgy_int_list(ctx: Ctx, p: Param) -> object:
    rng = ctx.rng
    value = int_list_value(ctx, p)
    value = [value] * (p.list_size or 1) if isinstance(value, int) else list(value)
    kind = rng.randrange(3)
    if kind == 0 and value:
        value[rng.randrange(len(value))] = edgy_int(rng)
    elif kind == 1:
        value = [rng.choice((2**31, 2**32, 2**62, 2**63 - 1, -1, 0)) for _ in value or [0]]
    else:
        value = value * 4 if value else []
    return value


def value_arg(ctx: Ctx, p: Param) -> str:
    """Source of a realistic (or, sometimes, edgy) value for parameter `p`."""
    rng, plan = ctx.rng, ctx.plan
    edgy = ctx.edgy()
    if p.base == "Tensor":
        if p.list_size is not None:
            return tensor_list_arg(ctx, p)
        if p.optional and p.name not in plan.shapes and rng.random() < 0.3:
            return "None"
        return tensor_arg(ctx, p)
    if p.name in plan.values and not edgy:
        return plan.values[p.name]
    if p.optional and rng.random() < 0.2:
        return "None"
    if p.base == "int":
        if p.list_size is not None:
            return render(edgy_int_list(ctx, p) if edgy else int_list_value(ctx, p))
        value = edgy_int(rng) if edgy else int_value(ctx, p.name)
        limit = SLOW_INT_LIMITS.get((ctx.op.name, p.name))
        if limit is not None and limit < value < 2**63:
            value = limit
        return render(value)
    if p.base == "float":
        choices = FLOAT_CHOICES.get(p.name)
        x = (
            edgy_float(rng)
            if edgy
            else rng.choice(choices)
            if choices
            else round(rng.uniform(-2, 2), 2)
        )
        return render(x)
    if p.base == "Scalar":
        if p.list_size is not None:
            return render([python_scalar(rng, edgy) for _ in range(plan.list_len)])
        choices = SCALAR_CHOICES.get(p.name)
        return render(rng.choice(choices) if choices and not edgy else python_scalar(rng, edgy))
    if p.base == "bool":
        return render(rng.random() < 0.5)
    if p.base == "str":
        if edgy:
            return rng.choice(("''", "'bogus'", "'x' * 1000", "'\\x00'"))
        choices = plan.strings.get(p.name) or STR_CHOICES.get(p.name) or ("",)
        return render(rng.choice(choices))
    if p.base == "ScalarType":
        return dtype_expr(rng.choice(DTYPES))
    if p.base == "Generator":
        return f"flambeau.Generator().manual_seed({rng.randrange(1000)})"
    if p.base == "Device":
        return rng.choice(
            ("'cpu'", "flambeau.device('cpu')", "'cuda'", "'meta'")
            if edgy
            else ("'cpu'", "flambeau.device('cpu')")
        )
    if p.base == "MemoryFormat":
        return "flambeau." + rng.choice(
            ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")
        )
    raise ValueError(f"{ctx.op.key}: no generator for parameter type {p.base}")


def out_arg(ctx: Ctx, inputs: dict[str, str]) -> str:
    """An out= tensor: usually plausible, often not (wrong dtype or shape, a view, the input)."""
    rng, setup = ctx.rng, ctx.setup
    first = next(iter(inputs.values()), None)

    def one() -> str:
        kind = rng.randrange(9)
        if kind <= 2:  # empty: resized to the result
            return make_tensor(setup, (0,), ctx.dtype, layout="contiguous")
        if kind == 3:
            return make_tensor(setup, ctx.shape, ctx.dtype)
        if kind == 4:  # wrong dtype
            return make_tensor(setup, ctx.shape, pick_dtype(rng), layout="contiguous")
        if kind == 5:  # wrong shape
            return make_tensor(setup, (3, 1, 2), ctx.dtype, layout="contiguous")
        if kind == 6:  # stride 0: every element aliases one
            ones = render((1,) * len(ctx.shape))
            return setup.assign(
                f"flambeau.zeros({ones}, dtype={dtype_expr(ctx.dtype)}).expand({render(ctx.shape)})"
            )
        if kind == 7 and first and first.isidentifier():  # the input itself
            return first
        return setup.assign(f"flambeau.zeros(1, dtype={dtype_expr(ctx.dtype)}).expand({2**31 + 1})")

    if ctx.op.n_outputs > 1:
        return "(" + ", ".join(one() for _ in range(ctx.op.n_outputs)) + ")"
    return one()


def generate(ops: list[Op], seed: int, index: int) -> Case:
    rng = random.Random(f"{seed}:{index}")
    op = rng.choice(ops)
    forms = op.forms()
    form = rng.choice(forms) if forms else "function"
    setup = Setup(rng)
    ctx = Ctx(rng, setup, op, base_shape(rng), pick_dtype(rng))
    ctx.plan = hints.plan(op, ctx)
    params = list(op.params)
    hostile_param = rng.choice(params) if params and rng.random() < HOSTILE_RATE else None
    receiver = form not in ("function", "out")
    if receiver and hostile_param is params[0]:
        hostile_param = None

    positional, keywords, args = [], [], {}
    omitted_positional = False
    for i, p in enumerate(params):
        if p is hostile_param:
            src = hostile(rng)
        elif p.has_default and not (receiver and i == 0) and rng.random() < OMIT_DEFAULT_RATE:
            if not p.kwonly:
                omitted_positional = True
            continue
        else:
            src = value_arg(ctx, p)
        args[p.name] = src
        if receiver and i == 0:
            continue
        if p.kwonly or omitted_positional or (i > 0 and rng.random() < KEYWORD_RATE):
            # `from` is a Python keyword: only a ** dict can name it
            keywords.append(f"**{{{p.name!r}: {src}}}" if iskeyword(p.name) else f"{p.name}={src}")
            omitted_positional = True
        else:
            positional.append(src)
    if form == "out":
        keywords.append(f"out={out_arg(ctx, args)}")
    if receiver:
        self_src = args[params[0].name]
        if not re.fullmatch(r"\w+", self_src):
            self_src = setup.assign(self_src)
        if form.startswith("__"):  # a dunder takes the other operand only, positionally
            other = args.get(params[1].name, "") if len(params) > 1 else ""
            call = f"{self_src}.{form}({other})"
        else:
            method = op.name + "_" if form == "inplace" else op.name
            call = f"{self_src}.{method}({', '.join(positional + keywords)})"
    else:
        # torch.linalg's spelling of a linalg_ operator: the same function, another door
        space, name = ("linalg.", op.name[7:]) if op.name.startswith("linalg_") and \
            rng.random() < 0.5 else ("", op.name)  # fmt: skip
        call = f"flambeau.{space}{name}({', '.join(positional + keywords)})"
    if rng.random() < PARALLEL_RATE:  # kernels split work across threads above a grain size
        setup.lines.insert(0, "flambeau.set_num_threads(2)")
    hostile_name = hostile_param.name if hostile_param else ""
    return Case(seed, index, op.key, form, setup.lines, call, hostile_name)


__all__ = ["Case", "generate", "numel"]
