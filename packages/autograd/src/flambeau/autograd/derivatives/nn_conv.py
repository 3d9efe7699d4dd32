"""Formulas of convolution, pooling, padding and resizing.

Each calls the operator's backward kernel (itself a core operator). The
backward operators are linear in grad_output, so their own formulas are the
forward operators (or a gather at saved indices), which gives double backward.
"""

from __future__ import annotations

import flambeau as F

from .helpers import needs_grad
from .registry import formula


def _tup(v, k):
    if v is None:
        return None
    return [int(v)] * k if isinstance(v, int) else [int(x) for x in v]


def _needs(t):
    return int(needs_grad(t))


# --- convolution --------------------------------------------------------------------------


def _conv_params(a, k, transposed):
    return dict(
        stride=_tup(a.get("stride", 1), k),
        padding=_tup(a.get("padding", 0), k),
        dilation=_tup(a.get("dilation", 1), k),
        transposed=transposed,
        output_padding=_tup(a.get("output_padding", 0), k),
        groups=int(a.get("groups", 1)),
    )


def _conv_backward(g, x, w, b, p, mask=None):
    # The mask is read from the formula's own arguments: views made inside a formula
    # (unsqueeze, pad) do not require grad when the graph is not being recorded.
    mask = mask or [_needs(x), _needs(w), _needs(b)]
    bias_sizes = list(b.shape) if isinstance(b, F.Tensor) else None
    gi, gw, gb = F.convolution_backward(
        g, x, w, bias_sizes, p["stride"], p["padding"], p["dilation"], p["transposed"],
        p["output_padding"], p["groups"], mask,
    )  # fmt: skip
    return gi, gw, gb


def _conv_nd(k, transposed):
    def fn(g, a):
        x, w, b = a["input"], a["weight"], a.get("bias")
        batched = x.dim() == k + 2
        xb, gb_ = (x, g) if batched else (x.unsqueeze(0), g.unsqueeze(0))
        mask = [_needs(a.get("mask_input", x)), _needs(w), _needs(b)]
        gi, gw, gbias = _conv_backward(gb_, xb, w, b, _conv_params(a, k, transposed), mask)
        if gi is not None and not batched:
            gi = gi.squeeze(0)
        return {"input": gi, "weight": gw, "bias": gbias}

    return fn


for _k in (1, 2, 3):
    formula(f"conv{_k}d")(_conv_nd(_k, False))
    formula(f"conv_transpose{_k}d")(_conv_nd(_k, True))


def _conv_same(k):
    def fn(g, a):
        x, w = a["input"], a["weight"]
        dil = _tup(a.get("dilation", 1), k)
        if a.get("padding", "valid") == "valid":
            return _conv_nd(k, False)(g, {**a, "padding": 0, "dilation": dil})
        left, extra = [], [0] * (2 * k)
        for i in range(k):
            total = dil[i] * (w.shape[2 + i] - 1)
            left.append(total // 2)
            extra[2 * (k - 1 - i) + 1] = total % 2
        xp = F.constant_pad_nd(x, extra) if any(extra) else x
        out = _conv_nd(k, False)(
            g, {**a, "input": xp, "mask_input": x, "padding": left, "dilation": dil}
        )
        gi = out["input"]
        if gi is not None and any(extra):
            gi = F.constant_pad_nd(gi, [-e for e in extra])
        return {**out, "input": gi}

    return fn


for _k in (1, 2, 3):
    formula(f"conv{_k}d.padding")(_conv_same(_k))


@formula("convolution")
def _convolution(g, a):
    k = a["weight"].dim() - 2
    p = _conv_params(a, k, bool(a["transposed"]))
    gi, gw, gb = _conv_backward(g, a["input"], a["weight"], a.get("bias"), p)
    return {"input": gi, "weight": gw, "bias": gb}


@formula("convolution_backward")
def _convolution_backward(g, a):
    # grad_input, grad_weight, grad_bias are bilinear in (grad_output, weight) and
    # (grad_output, input); their adjoints are the forward and the other gradients.
    ggi, ggw, ggb = (tuple(g) + (None, None, None))[:3]
    go, x, w = a["grad_output"], a["input"], a["weight"]
    k = w.dim() - 2
    p = _conv_params(a, k, bool(a["transposed"]))
    args = (p["stride"], p["padding"], p["dilation"], p["transposed"], p["output_padding"])
    d_go = None
    if ggi is not None:
        d_go = F.convolution(ggi, w, None, *args, p["groups"])
    if ggw is not None:
        t = F.convolution(x, ggw, None, *args, p["groups"])
        d_go = t if d_go is None else d_go + t
    if ggb is not None:
        t = ggb.reshape([1, -1] + [1] * k).expand(tuple(go.shape))
        d_go = t if d_go is None else d_go + t
    d_w = d_x = None
    if ggi is not None and _needs(w):
        d_w = F.convolution_backward(go, ggi, w, None, *args, p["groups"], [0, 1, 0])[1]
    if ggw is not None and _needs(x):
        d_x = F.convolution_backward(go, x, ggw, None, *args, p["groups"], [1, 0, 0])[0]
    return {"grad_output": d_go, "input": d_x, "weight": d_w}


# --- pooling --------------------------------------------------------------------------------


def _gather(g, idx, k):
    """g[..., idx] per plane over the last k dims: the adjoint of an index scatter."""
    lead = tuple(idx.shape[: idx.dim() - k])
    planes = 1
    for s in lead:
        planes *= s
    n_in, n_idx = 1, 1
    for s in g.shape[g.dim() - k :]:
        n_in *= s
    for s in idx.shape[idx.dim() - k :]:
        n_idx *= s
    picked = g.reshape(planes, n_in).gather(1, idx.reshape(planes, n_idx))
    return picked.reshape(tuple(idx.shape))


def _max_pool_grad(g, x, idx, k):
    if k == 1:
        return _max_pool_grad(g.unsqueeze(-2), x.unsqueeze(-2), idx.unsqueeze(-2), 2).squeeze(-2)
    return getattr(F, f"max_pool{k}d_with_indices_backward")(g, x, 1, None, 0, 1, False, idx)


def _max_pool(k, with_indices):
    def fn(g, a):
        x = a["input"]
        if with_indices:
            g, idx = (g[0] if isinstance(g, tuple) else g), a["results"][1]
        else:
            kw = {n: a[n] for n in ("stride", "padding", "dilation", "ceil_mode") if n in a}
            idx = getattr(F, f"max_pool{k}d_with_indices")(x.detach(), a["kernel_size"], **kw)[1]
        return {"input": _max_pool_grad(g, x, idx, k)}

    return fn


def _adaptive_max(k):
    def fn(g, a):
        g = g[0] if isinstance(g, tuple) else g
        x, idx = a["input"], a["results"][1]
        if k == 1:
            gi = F.adaptive_max_pool2d_backward(
                g.unsqueeze(-2), x.unsqueeze(-2), idx.unsqueeze(-2)
            ).squeeze(-2)
        else:
            gi = getattr(F, f"adaptive_max_pool{k}d_backward")(g, x, idx)
        return {"input": gi}

    return fn


def _index_scatter_backward(k):
    # grad_output was added at indices: its gradient gathers there.
    def fn(g, a):
        return {"grad_output": _gather(g, a["indices"], k)}

    return fn


def _max_unpool(k):
    def fn(g, a):
        return {"input": _gather(g, a["indices"], k)}

    return fn


for _k in (1, 2, 3):
    formula(f"max_pool{_k}d")(_max_pool(_k, False))
    formula(f"max_pool{_k}d_with_indices", needs_result=(1,))(_max_pool(_k, True))
    formula(f"adaptive_max_pool{_k}d", needs_result=(1,))(_adaptive_max(_k))
    formula(f"max_unpool{_k}d")(_max_unpool(_k))
for _k in (2, 3):
    formula(f"max_pool{_k}d_with_indices_backward")(_index_scatter_backward(_k))
    formula(f"adaptive_max_pool{_k}d_backward")(_index_scatter_backward(_k))


def _avg_args(a, k):
    return (
        a["kernel_size"],
        a.get("stride"),
        a.get("padding", 0),
        a.get("ceil_mode", False),
        a.get("count_include_pad", True),
    )


@formula("avg_pool1d")
def _avg_pool1d(g, a):
    ks, st, pd, ceil, cip = _avg_args(a, 1)
    st = _tup(st, 1) if st not in (None, []) else _tup(ks, 1)
    gi = F.avg_pool2d_backward(
        g.unsqueeze(-2), a["input"].unsqueeze(-2), [1] + _tup(ks, 1), [1] + st,
        [0] + _tup(pd, 1), ceil, cip, None,
    )  # fmt: skip
    return {"input": gi.squeeze(-2)}


def _avg_pool(k):
    def fn(g, a):
        ks, st, pd, ceil, cip = _avg_args(a, k)
        back = getattr(F, f"avg_pool{k}d_backward")
        return {"input": back(g, a["input"], ks, st, pd, ceil, cip, a.get("divisor_override"))}

    return fn


def _avg_pool_backward(k):
    def fn(g, a):
        fwd = getattr(F, f"avg_pool{k}d")
        out = fwd(g, a["kernel_size"], a["stride"], a["padding"], a["ceil_mode"],
                  a["count_include_pad"], a["divisor_override"])  # fmt: skip
        return {"grad_output": out}

    return fn


for _k in (2, 3):
    formula(f"avg_pool{_k}d")(_avg_pool(_k))
    formula(f"avg_pool{_k}d_backward", needs_input=False)(_avg_pool_backward(_k))


def _adaptive_avg(k):
    def fn(g, a):
        x = a["input"]
        if k == 1:
            gi = F.adaptive_avg_pool2d_backward(g.unsqueeze(-2), x.unsqueeze(-2)).squeeze(-2)
        else:
            gi = getattr(F, f"adaptive_avg_pool{k}d_backward")(g, x)
        return {"input": gi}

    return fn


def _adaptive_avg_backward(k):
    def fn(g, a):
        size = list(a["grad_output"].shape[-k:])
        return {"grad_output": getattr(F, f"adaptive_avg_pool{k}d")(g, size)}

    return fn


for _k in (1, 2, 3):
    formula(f"adaptive_avg_pool{_k}d", needs_input=False)(_adaptive_avg(_k))
for _k in (2, 3):
    formula(f"adaptive_avg_pool{_k}d_backward", needs_input=False)(_adaptive_avg_backward(_k))

# --- padding ----------------------------------------------------------------------------------


@formula("constant_pad_nd", needs_input=False)
def _constant_pad(g, a):
    return {"input": F.constant_pad_nd(g, [-p for p in a["pad"]])}


def _pad_kind(fwd, bwd, key):
    def forward_formula(g, a):
        return {"input": getattr(F, bwd)(g, a["input"], a[key])}

    def backward_formula(g, a):
        return {"grad_output": getattr(F, fwd)(g, a[key])}

    formula(fwd, needs_input=False)(forward_formula)
    formula(bwd, needs_input=False)(backward_formula)


for _kind in ("reflection", "replication"):
    for _k in (1, 2, 3):
        _pad_kind(f"{_kind}_pad{_k}d", f"{_kind}_pad{_k}d_backward", "padding")
_pad_kind("pad_circular", "pad_circular_backward", "pad")

_PAD_BACKWARD = {"reflect": "reflection", "replicate": "replication"}


@formula("pad", needs_input=False)
def _pad(g, a):
    mode, pad = a.get("mode", "constant"), list(a["pad"])
    if mode == "constant":
        return {"input": F.constant_pad_nd(g, [-p for p in pad])}
    if mode == "circular":
        return {"input": F.pad_circular_backward(g, a["input"], pad)}
    back = getattr(F, f"{_PAD_BACKWARD[mode]}_pad{len(pad) // 2}d_backward")
    return {"input": back(g, a["input"], pad)}


# --- resizing ---------------------------------------------------------------------------------

_SCALES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}
_LINEAR = {1: "upsample_linear1d", 2: "upsample_bilinear2d", 3: "upsample_trilinear3d"}


def _resize(name, k, linear):
    def forward_formula(g, a):
        sc = [a.get(s) for s in _SCALES[k]]
        extra = [a["align_corners"]] if linear else []
        size = list(a["input"].shape)
        return {"input": getattr(F, name + "_backward")(g, a["output_size"], size, *extra, *sc)}

    def backward_formula(g, a):
        sc = [a.get(s) for s in _SCALES[k]]
        extra = [a["align_corners"]] if linear else []
        return {"grad_output": getattr(F, name)(g, a["output_size"], *extra, *sc)}

    formula(name, needs_input=False)(forward_formula)
    formula(name + "_backward", needs_input=False)(backward_formula)


for _k in (1, 2, 3):
    _resize(f"upsample_nearest{_k}d", _k, False)
    _resize(_LINEAR[_k], _k, True)
    _resize(f"_upsample_nearest_exact{_k}d", _k, False)
_resize("upsample_bicubic2d", 2, True)
_resize("_upsample_bilinear2d_aa", 2, True)
_resize("_upsample_bicubic2d_aa", 2, True)
