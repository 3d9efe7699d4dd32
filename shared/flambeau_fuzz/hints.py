"""Shapes that agree: per-family hints so that realistic calls reach the kernels.

A schema says `mm(Tensor input, Tensor mat2)` but not that input's columns must
equal mat2's rows. Without that, nearly every generated call would stop at the
argument checks. A hint maps an operator family (by name) to the shapes, dtypes,
index ranges and non-tensor values of a valid-looking call; edgy and hostile
values are still mixed in on top by generate.py.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .values import render


@dataclass
class Plan:
    shapes: dict[str, object] = field(default_factory=dict)  # Tensor[]: a list of shapes
    dtypes: dict[str, str] = field(default_factory=dict)
    bounds: dict[str, tuple[int, int]] = field(default_factory=dict)  # index values [lo, hi)
    values: dict[str, str] = field(default_factory=dict)  # source of non-tensor arguments
    strings: dict[str, tuple] = field(default_factory=dict)  # str choices for this op
    sorted: set[str] = field(default_factory=set)  # tensors whose last dim must be sorted
    suffix: dict[str, str] = field(default_factory=dict)  # maps values into a domain: .abs()
    list_len: int = 2  # length of Scalar[] arguments (foreach)


def _dims(rng: random.Random, n: int, lo: int = 1, hi: int = 5) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def _float(ctx) -> str:
    return ctx.dtype if ctx.dtype in ("float32", "float64") or ctx.rng.random() < 0.2 else "float32"


def _spatial_rank(name: str) -> int:
    m = re.search(r"([123])d", name)
    return int(m.group(1)) if m else 2


def matmul(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    b, n, k, m = r.randint(1, 3), r.randint(0, 5), r.randint(0, 5), r.randint(0, 5)
    shapes = {
        "mm": {"input": (n, k), "mat2": (k, m)},
        "bmm": {"input": (b, n, k), "mat2": (b, k, m)},
        "mv": {"input": (n, k), "vec": (k,)},
        "dot": {"input": (k,), "other": (k,)},
        "vdot": {"input": (k,), "other": (k,)},
        "outer": {"input": (n,), "vec2": (m,)},
        "ger": {"input": (n,), "vec2": (m,)},
        "addmm": {"input": (n, m), "mat1": (n, k), "mat2": (k, m)},
        "addbmm": {"input": (n, m), "batch1": (b, n, k), "batch2": (b, k, m)},
        "baddbmm": {"input": (b, n, m), "batch1": (b, n, k), "batch2": (b, k, m)},
        "addr": {"input": (n, m), "vec1": (n,), "vec2": (m,)},
        "trace": {"input": (n, m)},
        "addmv": {"input": (n,), "mat": (n, k), "vec": (k,)},
        "tensordot": {"a": (n, k, 2), "b": (k, 2, m)},
    }
    if op.name == "matmul":
        left = r.choice([(k,), (n, k), (b, n, k), (2, b, n, k)])
        right = r.choice([(k,), (k, m), (b, k, m), (1, b, k, m)])
        plan.shapes.update(input=left, other=right)
    elif op.name in shapes:
        plan.shapes.update(shapes[op.name])
    plan.dtypes.update({name: _float(ctx) for name in plan.shapes})
    if op.name == "tensordot":
        plan.values.update(dims="2", dims_a="[1, 2]", dims_b="[0, 1]")
    if op.name in ("matrix_power", "linalg_matrix_power"):
        plan.shapes.update(input=(b, n, n), A=(n, n))
        plan.values["n"] = str(r.randint(-2, 3))
    if op.name in ("cross", "linalg_cross"):
        plan.shapes.update(input=(*ctx.shape[:2], 3), other=(*ctx.shape[:2], 3))
        plan.values["dim"] = "-1"


def linalg(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    batch = tuple(_dims(r, r.choice((0, 0, 1, 2)), 1, 3))
    n, k, m = r.randint(0, 5), r.randint(1, 3), r.randint(0, 5)
    dtype = (
        ctx.dtype if ctx.dtype in ("float32", "float64", "complex64", "complex128") else "float64"
    )
    square, rect = (*batch, n, n), (*batch, m, n)
    plan.shapes.update(A=square, input=square, B=(*batch, n, k), LU=square, x=rect)
    if op.name in (
        "linalg_lstsq",
        "linalg_qr",
        "linalg_svd",
        "linalg_svdvals",
        "linalg_pinv",
        "linalg_matrix_rank",
        "linalg_lu",
        "linalg_lu_factor",
        "linalg_matrix_norm",
        "linalg_norm",
    ):
        plan.shapes.update(A=rect, input=rect, b=(*batch, m, k))
    plan.dtypes = {name: dtype for name in ("A", "input", "B", "LU", "x", "b")}
    plan.shapes["pivots"] = (*batch, n)
    plan.dtypes["pivots"] = "int32"
    plan.bounds["pivots"] = (1, n + 1)
    plan.strings.update(
        driver=(None, "gelsy", "gelsd", "gelss", "gels")
        if "lstsq" in op.name
        else (None, "gesvd", "gesvdj", "gesvda"),
        mode=("reduced", "complete", "r"),
        ord=("fro", "nuc"),
    )
    plan.values["dim"] = r.choice(("[-2, -1]", "None", "[0, 1]"))


def conv(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    rank = 2 if op.name.startswith("convolution") else _spatial_rank(op.name)
    groups = r.choice((1, 1, 2))
    cin, cout = groups * r.randint(1, 2), groups * r.randint(1, 2)
    kernel = _dims(r, rank, 1, 3)
    spatial = [kk + r.randint(0, 4) for kk in kernel]
    n = r.randint(1, 2)
    transposed = "transpose" in op.name
    weight = (cin, cout // groups, *kernel) if transposed else (cout, cin // groups, *kernel)
    plan.shapes.update(input=(n, cin, *spatial), weight=weight, bias=(cout,))
    plan.dtypes.update(input=_float(ctx), weight=_float(ctx), bias=_float(ctx))
    plan.dtypes["weight"] = plan.dtypes["bias"] = plan.dtypes["input"]
    plan.values.update(
        groups=str(groups),
        transposed="False",
        output_padding=render([0] * rank),
        stride=render(_dims(r, rank, 1, 2)),
        padding=render(_dims(r, rank, 0, 1)),
        dilation=render([1] * rank),
    )


def pool(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    rank = _spatial_rank(op.name)
    kernel = _dims(r, rank, 1, 3)
    spatial = [kk + r.randint(0, 4) for kk in kernel]
    lead = r.choice(((r.randint(1, 2), r.randint(1, 3)), (r.randint(1, 3),)))
    plan.shapes.update(input=(*lead, *spatial), grad_output=(*lead, *spatial))
    plan.dtypes.update(input=_float(ctx), grad_output=_float(ctx))
    plan.values.update(
        kernel_size=render(kernel),
        padding=render([kk // 2 for kk in kernel]),
        stride=r.choice(("None", render(_dims(r, rank, 1, 2)))),
        dilation=render([1] * rank),
        output_size=render(_dims(r, rank, 1, 4)),
    )
    if op.name.startswith("max_unpool"):
        out = [2 * s for s in spatial]
        plan.values["output_size"] = render(out)
        plan.shapes["indices"] = plan.shapes["input"]
        plan.bounds["indices"] = (0, max(1, _prod(out)))


def resize(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    rank = _spatial_rank(op.name)
    lead = (r.randint(1, 2), r.randint(1, 3))
    spatial = _dims(r, rank, 2, 5)
    out = _dims(r, rank, 1, 7)
    plan.shapes.update(input=(*lead, *spatial), grad_output=(*lead, *out))
    plan.dtypes.update(input=_float(ctx), grad_output=_float(ctx))
    plan.values.update(output_size=render(out), input_size=render([*lead, *spatial]))
    if "pad" in op.name:
        plan.shapes["grad_output"] = plan.shapes["input"]
        pads = [r.randint(0, s - 1) for s in spatial for _ in range(2)]
        plan.values["padding"] = render(pads)
        plan.values["pad"] = render(pads[: 2 * r.randint(1, rank)])
        plan.strings["mode"] = ("constant", "reflect", "replicate", "circular")


def norm(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    n, c = r.randint(1, 3), r.randint(1, 4)
    rest = tuple(_dims(r, r.randint(0, 2), 1, 4))
    shape = (n, c, *rest)
    dtype = _float(ctx)
    for name in ("input", "grad_out"):
        plan.shapes[name] = shape
    for name in ("weight", "bias", "running_mean", "running_var", "save_mean", "save_invstd"):
        plan.shapes[name] = (c,)
    plan.dtypes = {name: dtype for name in plan.shapes}
    if "layer_norm" in op.name:
        k = r.randint(1, len(shape))
        plan.values["normalized_shape"] = render(list(shape[-k:]))
        plan.shapes.update(weight=shape[-k:], bias=shape[-k:])
    if "group_norm" in op.name:
        hw = _prod(rest)
        plan.values.update(N=str(n), C=str(c), HxW=str(hw), group="1", num_groups="1")
        plan.shapes.update(mean=(n, 1), rstd=(n, 1))


def loss(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    n, c = r.randint(1, 4), r.randint(1, 5)
    dtype = _float(ctx)
    if "nll" in op.name or op.name == "cross_entropy_loss":
        plan.shapes.update(self=(n, c), target=(n,), weight=(c,), grad_output=())
        plan.bounds["target"] = (0, c)
        plan.values["ignore_index"] = r.choice(("-100", "0"))
    else:
        shape = ctx.shape
        plan.shapes.update(
            self=shape, target=shape, weight=shape, pos_weight=shape, grad_output=shape
        )
        plan.dtypes["target"] = dtype
        if op.name.startswith("binary_cross_entropy"):  # probabilities
            plan.suffix.update(target=".sigmoid()")
            if "logits" not in op.name:
                plan.suffix.update(self=".sigmoid()")
    plan.dtypes.update(self=dtype, weight=dtype, grad_output=dtype, pos_weight=dtype)


def embedding(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    v, d, length = r.randint(1, 6), r.randint(1, 4), r.randint(0, 6)
    plan.shapes.update(weight=(v, d), indices=(length,), grad_output=(length, d), grad=(1, d))
    plan.bounds["indices"] = (0, v)
    plan.values.update(num_weights=str(v), padding_idx=r.choice(("-1", "0", "None")))
    nbags = r.randint(1, 3)
    plan.shapes.update(offsets=(nbags,), per_sample_weights=(length,))
    plan.dtypes.update(weight=_float(ctx), grad_output=_float(ctx), grad=_float(ctx))
    plan.dtypes["per_sample_weights"] = plan.dtypes["weight"]
    plan.values["mode"] = str(r.randint(0, 2))
    plan.sorted.add("offsets")
    plan.bounds["offsets"] = (0, length + 1)
    # _embedding_bag_backward: the bookkeeping tensors embedding_bag returns.
    plan.shapes.update(grad=(nbags, d), offset2bag=(length,), bag_size=(nbags,),
                       maximum_indices=r.choice(((nbags, d), (nbags,))))  # fmt: skip
    plan.bounds.update(offset2bag=(0, nbags), bag_size=(0, length + 1), maximum_indices=(0, v))
    plan.sorted.add("offset2bag")


def attention(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    n, h, seq_q, seq_k, e = (
        r.randint(1, 2),
        r.randint(1, 2),
        r.randint(1, 4),
        r.randint(1, 4),
        r.randint(1, 4),
    )
    plan.shapes.update(
        query=(n, h, seq_q, e),
        key=(n, h, seq_k, e),
        value=(n, h, seq_k, e),
        attn_mask=(seq_q, seq_k),
        grad_out=(n, h, seq_q, e),
        out=(n, h, seq_q, e),
        logsumexp=(n, h, seq_q),
        philox_seed=(),
        philox_offset=(),
    )
    dtype = _float(ctx)
    plan.dtypes.update(
        {k: dtype for k in ("query", "key", "value", "grad_out", "out", "logsumexp")}
    )
    plan.dtypes["attn_mask"] = r.choice(("bool", dtype))


def ctc(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    t, n, c, s = r.randint(1, 6), r.randint(1, 3), r.randint(2, 5), r.randint(1, 3)
    plan.shapes.update(
        log_probs=(t, n, c),
        targets=(n, s),
        grad=(),
        input_lengths=(n,),
        target_lengths=(n,),
        neg_log_likelihood=(n,),
        log_alpha=(n, t, 2 * s + 1),
    )
    plan.dtypes.update(log_probs=_float(ctx), grad=_float(ctx))
    plan.bounds.update(targets=(1, c), input_lengths=(0, t + 1), target_lengths=(0, s + 1))
    plan.values.update(
        input_lengths=render([r.randint(0, t) for _ in range(n)]),
        target_lengths=render([r.randint(0, s) for _ in range(n)]),
        blank="0",
    )


def rnn(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    b, h = r.randint(1, 3), r.randint(1, 4)
    gates = 4 * h if "lstm" in op.name else 3 * h
    plan.shapes.update(
        input_gates=(b, gates),
        hidden_gates=(b, gates),
        cx=(b, h),
        hx=(b, h),
        cy=(b, h),
        input_bias=(gates,),
        hidden_bias=(gates,),
        grad_hy=(b, h),
        grad_cy=(b, h),
        workspace=(b, gates if "lstm" in op.name else 5 * h),
    )
    plan.dtypes = {name: _float(ctx) for name in plan.shapes}


def foreach(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    from .generate import base_shape  # a cycle at import time only

    shapes = [base_shape(r) for _ in range(r.randint(1, 4))]
    for p in op.params:
        if p.base == "Tensor" and p.list_size is not None:
            plan.shapes[p.name] = shapes
        elif p.base == "Tensor":
            plan.shapes[p.name] = ()
    plan.list_len = len(shapes)


def indexing(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    shape = ctx.shape
    dim = r.randint(-len(shape), len(shape) - 1) if shape else 0
    size = shape[dim] if shape else 1
    plan.values["dim"] = str(dim)
    if op.name in ("index", "index_put"):
        count = r.randint(1, max(1, len(shape)))
        k = r.randint(0, 4)
        plan.shapes["indices"] = [None if r.random() < 0.2 else (k,) for _ in range(count)]
        plan.bounds["indices"] = (0, max(1, min(shape[:count], default=1)))
        plan.shapes["values"] = r.choice(((), (k,)))
    elif op.name in ("gather", "scatter", "scatter_add", "scatter_reduce", "take_along_dim"):
        index = tuple(r.randint(0, s) for s in shape)
        plan.shapes.update(index=index, src=index, indices=index)
        plan.bounds.update(index=(0, max(1, size)), indices=(0, max(1, size)))
    elif op.name.startswith("index_"):
        k = r.randint(0, 4)
        plan.shapes["index"] = (k,)
        plan.bounds["index"] = (0, max(1, size))
        plan.shapes["source"] = tuple(
            k if i == dim % max(1, len(shape)) else s for i, s in enumerate(shape)
        )
        plan.shapes["value"] = ()
    elif op.name == "take":
        plan.shapes["index"] = (r.randint(0, 5),)
        plan.bounds["index"] = (0, max(1, _prod(shape)))
    elif op.name.startswith("masked"):
        plan.shapes.update(value=(), source=(_prod(shape),))
    if op.name == "scatter_reduce":
        plan.strings["reduce"] = ("sum", "prod", "mean", "amax", "amin")
    else:
        plan.strings["reduce"] = ("add", "multiply")


def shape_ops(op, ctx, plan: Plan) -> None:
    r, shape = ctx.rng, ctx.shape
    n = _prod(shape)
    if op.name in ("view", "reshape") and op.overload != "dtype":
        target = [n] if r.random() < 0.5 else [*shape]
        if target and r.random() < 0.3:
            target[r.randrange(len(target))] = -1
        plan.values["size"] = plan.values["shape"] = render(target)
    if op.name == "expand":
        plan.values["size"] = render(
            [r.choice((s, -1)) if s != 1 else r.randint(1, 3) for s in shape]
        )
    if op.name == "permute":
        dims = list(range(len(shape)))
        r.shuffle(dims)
        plan.values["dims"] = render(dims)
    if op.name == "repeat":
        plan.values["repeats"] = render(_dims(r, len(shape) + r.randint(0, 1), 1, 3))
    if op.name == "as_strided":
        plan.values.update(size=render([min(s, 2) for s in shape]), stride=render([1] * len(shape)))
    if op.name in (
        "cat",
        "concat",
        "concatenate",
        "stack",
        "hstack",
        "vstack",
        "dstack",
        "meshgrid",
    ):
        shapes = [shape] * r.randint(1, 3)
        plan.shapes["tensors"] = [
            s if op.name != "meshgrid" else (r.randint(0, 4),) for s in shapes
        ]


def creation(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    plan.values.update(
        size=render(list(ctx.shape)), n=str(r.randint(0, 6)), steps=str(r.randint(0, 8))
    )
    if op.name in ("randint", "randint_like"):
        low = r.randint(-5, 3)
        plan.values.update(low=str(low), high=str(low + r.randint(1, 10)))
    if op.name == "arange":
        plan.values.update(
            start=str(r.randint(-3, 3)),
            end=str(r.randint(-3, 20)),
            step=r.choice(("1", "2", "-1", "0.5")),
        )
    if op.name in ("multinomial", "bernoulli", "poisson"):
        plan.shapes["input"] = ctx.shape[-2:] or (3,)
        plan.dtypes["input"] = plan.dtypes["p"] = _float(ctx)
        plan.values["num_samples"] = str(r.randint(1, 3))
        plan.suffix["input"] = ".sigmoid()" if op.name == "bernoulli" else ".abs()"
        plan.suffix["p"] = ".sigmoid()"


EINSUM = {  # equation -> shapes of its operands, in terms of sizes i, j, k
    "ij,jk->ik": ("ij", "jk"),
    "i,i->": ("i", "i"),
    "ii->i": ("ii",),
    "ij->ji": ("ij",),
    "bij,bjk->bik": ("kij", "kjk"),
    "i,j->ij": ("i", "j"),
    "...ij->...ji": ("kij",),
    "ijk,ikj->i": ("ijk", "ikj"),
}


def einsum(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    equation = r.choice(sorted(EINSUM))
    size = {"i": r.randint(0, 4), "j": r.randint(1, 4), "k": r.randint(1, 3)}
    plan.values["equation"] = render(equation)
    plan.shapes["tensors"] = [tuple(size[c] for c in s) for s in EINSUM[equation]]
    plan.dtypes["tensors"] = _float(ctx)


def complex_views(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    if op.name == "view_as_complex":
        plan.shapes["input"] = (*ctx.shape[:3], 2)
        plan.dtypes["input"] = r.choice(("float32", "float64"))
    elif op.name in ("view_as_real", "imag", "real", "angle"):
        plan.dtypes["input"] = r.choice(("complex64", "complex128", ctx.dtype))
    if op.name in ("complex", "polar"):
        dtype = r.choice(("float32", "float64"))
        plan.dtypes.update(real=dtype, imag=dtype, abs=dtype, angle=dtype)


def split_sizes(op, ctx, plan: Plan) -> None:
    r, shape = ctx.rng, ctx.shape
    dim = r.randint(-len(shape), len(shape) - 1) if shape else 0
    size = shape[dim] if shape else 0
    cuts = sorted(r.randint(0, size) for _ in range(r.randint(0, 3)))
    parts = [b - a for a, b in zip([0, *cuts], [*cuts, size])]
    plan.values["dim"] = str(dim)
    if op.overload == "sizes":
        plan.values["split_size_or_sections"] = render(parts)
    elif op.overload == "indices":
        plan.values["indices_or_sections"] = render(cuts)


def sorting(op, ctx, plan: Plan) -> None:
    r = ctx.rng
    if op.name in ("searchsorted",):
        plan.shapes.update(sorted_sequence=ctx.shape or (3,), input=ctx.shape or (3,))
        plan.sorted.add("sorted_sequence")
        plan.shapes["sorter"] = ctx.shape or (3,)
        plan.bounds["sorter"] = (0, max(1, (ctx.shape or (3,))[-1]))
    if op.name == "bucketize":
        plan.shapes["boundaries"] = (r.randint(0, 6),)
        plan.sorted.add("boundaries")
    if op.name == "bincount":
        length = r.randint(0, 8)
        plan.shapes.update(input=(length,), weights=(length,))
        plan.bounds["input"] = (0, 10)
    if op.name in ("topk", "kthvalue"):
        plan.values["k"] = str(r.randint(1, max(1, min(ctx.shape, default=1))))


FAMILIES: list[tuple[str, Callable]] = [
    (r"^_foreach", foreach),
    (r"ctc", ctc),
    (
        r"^(mm|bmm|mv|dot|vdot|outer|ger|addmm|addbmm|baddbmm|addr|trace|tensordot|matmul|"
        r"matrix_power|linalg_matrix_power|cross|linalg_cross)$",
        matmul,
    ),
    (r"^linalg_", linalg),
    (r"^conv", conv),
    (r"pool|unpool", pool),
    (r"upsample|pad", resize),
    (r"norm", norm),
    (r"loss|nll|cross_entropy|kl_div", loss),
    (r"embedding", embedding),
    (r"scaled_dot_product", attention),
    (r"_thnn_fused", rnn),
    (
        r"^(index|index_put|gather|scatter|scatter_add|scatter_reduce|index_\w+|take|"
        r"take_along_dim|masked_\w+)$",
        indexing,
    ),
    (
        r"^(view|reshape|expand|permute|repeat|as_strided|cat|concat|concatenate|stack|hstack|"
        r"vstack|dstack|meshgrid)$",
        shape_ops,
    ),
    (
        r"^(empty|zeros|ones|full|rand|randn|randint|randperm|eye|arange|linspace|logspace|"
        r"normal|multinomial|bernoulli|poisson)",
        creation,
    ),
    (r"^(searchsorted|bucketize|bincount|topk|kthvalue)$", sorting),
    (r"^einsum$", einsum),
    (r"^(view_as_complex|view_as_real|real|imag|angle|complex|polar)$", complex_views),
    (r"^(split|tensor_split)$", split_sizes),
]
_COMPILED = [(re.compile(p), f) for p, f in FAMILIES]


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def plan(op, ctx) -> Plan:
    """The hints of the first family whose pattern matches the operator's name."""
    result = Plan()
    for pattern, fill in _COMPILED:
        if pattern.search(op.name):
            fill(op, ctx, result)
            break
    return result
