"""Formulas of the neural-network operators (ops/nn_*.yaml): activations, softmax,
normalisation, dropout, embeddings and losses.

Forward formulas call the core's backward kernels; the backward kernels have
formulas of their own where cheap, so double backward works. Operators that
PyTorch implements as compositions (layer_norm, cross_entropy_loss, dropout,
selu, ...) are registered with ``composite``: autograd records their
decomposition instead.
"""

from __future__ import annotations

import math

import flambeau as F

from .helpers import needs_grad
from .registry import composite, formula

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ALPHA_DROPOUT = 1.7580993408473766


def _first(g):
    return g[0] if isinstance(g, tuple) else g


def _where(cond, a, like):
    """a where cond, else 0 (like: a tensor of the result's dtype)."""
    return F.where(cond, a, F.zeros((), dtype=like.dtype))


def _vjp(fn, primals, cotangents):
    """Gradients of fn(*primals) (a tuple of tensors) against cotangents, for primals
    that are tensors (None elsewhere). With grad mode on (create_graph), primals that
    require grad stay connected, so the result is differentiable again."""
    create = F.is_grad_enabled()
    with F.autograd.enable_grad():
        xs = [
            p
            if p is None or (create and p.requires_grad)
            else p.detach().requires_grad_(p.dtype.is_floating_point)
            for p in primals
        ]
        outs = fn(*xs)
        pairs = [(o, c) for o, c in zip(outs, cotangents) if o is not None and c is not None]
        wrt = [x for x in xs if x is not None and x.requires_grad]
        if not pairs or not wrt:
            return [None] * len(primals)
        grads = F.autograd.grad(
            [o for o, _ in pairs],
            wrt,
            [c for _, c in pairs],
            create_graph=create,
            allow_unused=True,
        )
    it = iter(grads)
    return [next(it) if x is not None and x.requires_grad else None for x in xs]


# ---- softmax ----------------------------------------------------------------


@formula("softmax", needs_input=False, needs_result=True, reads={"input": ()})  # its dtype
def _softmax(g, a):
    return {"input": F._softmax_backward_data(g, a["result"], a["dim"], a["input"].dtype)}


@formula("log_softmax", needs_input=False, needs_result=True, reads={"input": ()})
def _log_softmax(g, a):
    return {"input": F._log_softmax_backward_data(g, a["result"], a["dim"], a["input"].dtype)}


@formula("_softmax_backward_data")
def _softmax_backward_data(g, a):
    go, y, dim = a["grad_output"], a["output"], a["dim"]
    gy = (g * y).sum(dim, keepdim=True)
    s = (go * y).sum(dim, keepdim=True)
    return {"grad_output": y * (g - gy), "output": g * (go - s) - go * gy}


@formula("_log_softmax_backward_data")
def _log_softmax_backward_data(g, a):
    go, y, dim = a["grad_output"], a["output"], a["dim"]
    e = F.exp(y)
    return {
        "grad_output": g - (g * e).sum(dim, keepdim=True),
        "output": -g * e * go.sum(dim, keepdim=True),
    }


# ---- pointwise activations ------------------------------------------------------


@formula("gelu")
def _gelu(g, a):
    return {"input": F.gelu_backward(g, a["input"], approximate=a["approximate"])}


@formula("gelu_backward")
def _gelu_backward(g, a):
    go, x, approx = a["grad_output"], a["self"], a["approximate"]
    if approx == "tanh":
        k, c = math.sqrt(2 / math.pi), 0.044715
        t = F.tanh(k * (x + c * x * x * x))
        du = k * (1 + 3 * c * x * x)
        second = (1 - t * t) * (du - x * t * du * du + 0.5 * x * (6 * k * c * x))
    else:
        pdf = F.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        second = pdf * (2 - x * x)
    return {
        "grad_output": F.gelu_backward(g, x, approximate=approx),
        "self": g * go * second,
    }


@formula("silu")
def _silu(g, a):
    return {"input": F.silu_backward(g, a["input"])}


@formula("silu_backward")
def _silu_backward(g, a):
    go, x = a["grad_output"], a["self"]
    s = F.sigmoid(x)
    return {
        "grad_output": F.silu_backward(g, x),
        "self": g * go * s * (1 - s) * (2 + x * (1 - 2 * s)),
    }


@formula("mish")
def _mish(g, a):
    return {"input": F.mish_backward(g, a["input"])}


@formula("mish_backward")
def _mish_backward(g, a):
    # Pointwise, so its own formula is cheap: with t = tanh(softplus(x)), s = sigmoid(x),
    # mish'(x) = t + x s (1 - t^2) and mish''(x) = s (1 - t^2) (2 + x (1 - s) - 2 x s t).
    go, x = a["grad_output"], a["self"]
    t, s = F.tanh(F.softplus(x)), F.sigmoid(x)
    second = s * (1 - t * t) * (2 + x * (1 - s) - 2 * x * s * t)
    return {"grad_output": F.mish_backward(g, x), "self": g * go * second}


@formula("elu")
def _elu(g, a):
    return {"input": F.elu_backward(g, a["alpha"], a["scale"], a["input_scale"], False, a["input"])}


@formula("elu_backward")
def _elu_backward(g, a):
    go, v = a["grad_output"], a["self_or_result"]
    alpha, scale, in_scale = (float(a[k]) for k in ("alpha", "scale", "input_scale"))
    if a["is_result"]:
        dv = g * go * in_scale
    else:
        dv = g * go * (in_scale * in_scale * scale * alpha) * F.exp(v * in_scale)
    return {
        "grad_output": F.elu_backward(g, alpha, scale, in_scale, a["is_result"], v),
        "self_or_result": _where(v <= 0, dv, v),
    }


@formula("leaky_relu")
def _leaky_relu(g, a):
    return {"input": F.leaky_relu_backward(g, a["input"], a["negative_slope"], False)}


@formula("leaky_relu_backward")
def _leaky_relu_backward(g, a):
    return {
        "grad_output": F.leaky_relu_backward(
            g, a["self"], a["negative_slope"], a["self_is_result"]
        ),
        "self": F.zeros_like(g),  # piecewise linear: flat in x (PyTorch's zeros_like(grad))
    }


@formula("softplus")
def _softplus(g, a):
    return {"input": F.softplus_backward(g, a["input"], a["beta"], a["threshold"])}


@formula("softplus_backward")
def _softplus_backward(g, a):
    go, x, beta, thr = a["grad_output"], a["self"], float(a["beta"]), float(a["threshold"])
    s = F.sigmoid(x * beta)
    return {
        "grad_output": F.softplus_backward(g, x, beta, thr),
        "self": _where(x * beta <= thr, g * go * beta * s * (1 - s), x),
    }


@formula("hardtanh")
def _hardtanh(g, a):
    return {"input": F.hardtanh_backward(g, a["input"], a["min_val"], a["max_val"])}


@formula("hardtanh_backward")
def _hardtanh_backward(g, a):
    return {
        "grad_output": F.hardtanh_backward(g, a["self"], a["min_val"], a["max_val"]),
        "self": F.zeros_like(g),
    }


@formula("hardswish")
def _hardswish(g, a):
    return {"input": F.hardswish_backward(g, a["input"])}


@formula("hardswish_backward")
def _hardswish_backward(g, a):
    go, x = a["grad_output"], a["self"]
    return {
        "grad_output": F.hardswish_backward(g, x),
        "self": _where((x > -3) & (x < 3), g * go / 3, x),
    }


@formula("hardsigmoid")
def _hardsigmoid(g, a):
    return {"input": F.hardsigmoid_backward(g, a["input"])}


@formula("hardsigmoid_backward")
def _hardsigmoid_backward(g, a):
    return {"grad_output": F.hardsigmoid_backward(g, a["self"]), "self": F.zeros_like(g)}


@formula("log_sigmoid")
def _log_sigmoid(g, a):
    return {"input": F.log_sigmoid_backward(g, a["input"])}


@formula("log_sigmoid_backward")
def _log_sigmoid_backward(g, a):
    go, x = a["grad_output"], a["self"]
    s = F.sigmoid(-x)
    return {"grad_output": F.log_sigmoid_backward(g, x), "self": -g * go * s * (1 - s)}


@formula("softshrink")
def _softshrink(g, a):
    return {"input": F.softshrink_backward(g, a["input"], a["lambd"])}


@formula("softshrink_backward")
def _softshrink_backward(g, a):
    return {
        "grad_output": F.softshrink_backward(g, a["self"], a["lambd"]),
        "self": F.zeros_like(g),
    }


@formula("hardshrink")
def _hardshrink(g, a):
    return {"input": F.hardshrink_backward(g, a["input"], a["lambd"])}


@formula("hardshrink_backward")
def _hardshrink_backward(g, a):
    return {"grad_out": F.hardshrink_backward(g, a["self"], a["lambd"]), "self": F.zeros_like(g)}


@formula("threshold")
def _threshold(g, a):
    return {"input": F.threshold_backward(g, a["input"], a["threshold"])}


@formula("threshold_backward")
def _threshold_backward(g, a):
    # As PyTorch's derivatives (self: zeros_like(grad)), the piecewise-constant masks of
    # these backwards give their input a zero gradient, not none: a bias feeding a ReLU
    # gets zeros from a gradient penalty's backward (and optimizers step it), not None.
    return {
        "grad_output": F.threshold_backward(g, a["self"], a["threshold"]),
        "self": F.zeros_like(g),
    }


@composite("selu")
def _selu(call, a):
    return call("elu", a["input"], _SELU_ALPHA, _SELU_SCALE, 1.0)


@composite("celu")
def _celu(call, a):
    alpha = float(a["alpha"])
    return call("elu", a["input"], alpha, 1.0, 1.0 / alpha)


@composite("relu6")
def _relu6(call, a):
    return call("hardtanh", a["input"], 0.0, 6.0)


# ---- dropout ------------------------------------------------------------------


def _dropout_scale(p):
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


@formula("native_dropout", needs_input=False, needs_result=(1,))  # the mask
def _native_dropout(g, a):
    go = _first(g)
    if go is None:
        return {}
    if a["train"] is False:
        return {"input": go}
    return {"input": F.native_dropout_backward(go, a["results"][1], _dropout_scale(a["p"]))}


@formula("native_dropout_backward")
def _native_dropout_backward(g, a):
    return {"grad_output": F.native_dropout_backward(g, a["mask"], a["scale"])}


def _noise(x, shape, p):
    return F.empty(shape, dtype=x.dtype).bernoulli_(1 - p)


@composite("dropout")
def _dropout(call, a):
    x, p = a["input"], a["p"]
    if not a["train"] or p == 0 or x.numel() == 0:
        return x
    return call("native_dropout", x, p, True)[0]


@composite("feature_dropout")
def _feature_dropout(call, a):
    x, p = a["input"], a["p"]
    if not a["train"] or p == 0 or x.numel() == 0:
        return x
    if x.dim() < 2:
        return F.feature_dropout(x.detach(), p, True)  # raises the core's error
    if p == 1:
        return call("mul", x, F.zeros((), dtype=x.dtype))
    noise = _noise(x, tuple(x.shape[:2]) + (1,) * (x.dim() - 2), p)
    return call("mul", call("mul", x, noise), 1.0 / (1.0 - p))


@composite("alpha_dropout")
def _alpha_dropout(call, a):
    x, p = a["input"], a["p"]
    if not a["train"] or p == 0 or x.numel() == 0:
        return x
    if p == 1:
        return call("mul", x, F.zeros((), dtype=x.dtype))
    k = 1.0 / math.sqrt((_ALPHA_DROPOUT**2 * p + 1) * (1 - p))
    noise = _noise(x, tuple(x.shape), p)
    b = (noise - 1) * (_ALPHA_DROPOUT * k) + _ALPHA_DROPOUT * k * p
    return call("add", call("mul", call("mul", x, noise), k), b)


# ---- embeddings ---------------------------------------------------------------


def _sparse_rows_grad(rows, idx, pad, num_weights):
    """The sparse COO gradient of a weight whose rows idx received the gradient rows (one
    per index), as PyTorch's embedding_sparse_backward: uncoalesced (a row named twice
    appears twice), padding_idx's entries left out, int64 indices of shape (1, nnz)."""
    dim = rows.shape[-1]
    idx = idx.reshape(-1).to(F.int64)
    rows = rows.reshape(-1, dim)
    if pad is not None and pad >= 0:
        keep = idx != pad
        idx, rows = idx[keep], rows[keep]
    return F.sparse_coo_tensor(idx.unsqueeze(0), rows, (num_weights, dim))


def _refuse_sparse_freq(a):
    if a["scale_grad_by_freq"]:
        raise RuntimeError(
            "embedding_backward: scale_grad_by_freq not supported with sparse gradients"
        )


@formula("embedding")
def _embedding(g, a):
    w = a["weight"]
    pad = a["padding_idx"]
    if pad is not None and pad < 0:
        pad = -1 if pad == -1 else pad + w.shape[0]
    if a["sparse"]:
        _refuse_sparse_freq(a)
        return {"weight": _sparse_rows_grad(g, a["indices"], pad, w.shape[0])}
    return {
        "weight": F.embedding_dense_backward(
            g, a["indices"], w.shape[0], pad, a["scale_grad_by_freq"]
        )
    }


@formula("embedding_dense_backward")
def _embedding_dense_backward(g, a):
    # Linear in grad_output: its gradient gathers rows of g (scaling as the kernel did).
    idx, pad = a["indices"], a["padding_idx"]
    rows = F.embedding(g, idx)
    keep = (idx != pad).to(g.dtype).unsqueeze(-1)
    if a["scale_grad_by_freq"]:
        counts = F.embedding_dense_backward(
            F.ones(tuple(idx.shape) + (1,), dtype=g.dtype), idx, a["num_weights"], -1, False
        )
        keep = keep / F.embedding(counts, idx)
    return {"grad_output": rows * keep}


@formula("embedding_bag", needs_result=(1, 2, 3))
def _embedding_bag(g, a):
    go = _first(g)
    if go is None:
        return {}
    w, idx = a["weight"], a["indices"]
    _, offset2bag, bag_size, max_indices = a["results"]
    pad = a["padding_idx"]
    pad = -1 if pad is None else (pad + w.shape[0] if pad < 0 else pad)
    psw = a["per_sample_weights"]
    if a["sparse"]:  # sum and mean only: F.embedding_bag refuses sparse max
        _refuse_sparse_freq(a)
        bags = {**a, "padding_idx": pad, "offset2bag": offset2bag, "bag_size": bag_size}
        scale = _bag_scale(bags, idx, go.dtype, with_psw=True)
        rows = F.embedding(go, offset2bag) * scale.unsqueeze(-1)
        out = {"weight": _sparse_rows_grad(rows, idx, pad, w.shape[0])}
    else:
        weight_grad = F._embedding_bag_backward(
            go,
            idx,
            a["offsets"],
            offset2bag,
            bag_size,
            max_indices,
            w.shape[0],
            a["scale_grad_by_freq"],
            a["mode"],
            False,
            psw,
            pad,
        )
        out = {"weight": weight_grad}
    if psw is not None:
        # d out[bag(i)] / d psw[i] = weight[indices[i]] (zero for padding)
        rows = F.embedding(w, idx) * F.embedding(go, offset2bag)
        out["per_sample_weights"] = rows.sum(1) * (idx != pad).to(go.dtype)
    return out


def _bag_scale(a, idx, dtype, with_psw):
    """The factor the backward gives each index of the sum/mean modes: its per-sample
    weight, 1/bag size for mean, 1/count for scale_grad_by_freq, zero for padding."""
    s = (idx != a["padding_idx"]).to(dtype)
    psw = a["per_sample_weights"]
    if with_psw and psw is not None:
        s = s * psw
    if a["mode"] == 1:  # bags holding only padding have size 0 and no counted index
        size = a["bag_size"].clamp_min(1).to(dtype)
        s = s / F.index_select(size, 0, a["offset2bag"])
    if a["scale_grad_by_freq"]:
        ones = F.ones(tuple(idx.shape) + (1,), dtype=dtype)
        counts = F.embedding_dense_backward(ones, idx, a["num_weights"], -1, False)
        s = s / F.index_select(counts.squeeze(-1), 0, idx)
    return s


@formula("_embedding_bag_backward")
def _embedding_bag_backward(g, a):
    # The backward is linear in grad (and in per_sample_weights): it scatters scaled rows
    # of grad into the weight's rows, so its derivative gathers rows of g back into bags.
    # Written with embedding / embedding_dense_backward, which have formulas themselves.
    grad, idx = a["grad"], a["indices"]
    if a["mode"] == 2:  # max: each (bag, column) took the gradient of one weight row
        # Empty bags took nothing: the core marks them -1 (PyTorch 0, with bag size 0).
        mi = a["maximum_indices"]
        took = (mi >= 0) & (a["bag_size"].unsqueeze(-1) > 0)
        picked = F.gather(g, 0, mi.clamp_min(0))
        return {"grad": picked * took.to(g.dtype)}
    rows = F.embedding(g, idx)  # g at each index's weight row
    s = _bag_scale(a, idx, g.dtype, with_psw=True)
    bags = F.embedding_dense_backward(
        rows * s.unsqueeze(-1), a["offset2bag"], grad.shape[0], -1, False
    )
    out = {"grad": bags}
    if a["per_sample_weights"] is not None:
        dot = (rows * F.embedding(grad, a["offset2bag"])).sum(1)
        out["per_sample_weights"] = dot * _bag_scale(a, idx, g.dtype, with_psw=False)
    return out


# ---- normalisation ----------------------------------------------------------------


def _stats_grad(xv, mean, rstd, gmean, grstd, n):
    """Gradient reaching xv (x viewed so that mean/rstd broadcast) through the
    mean and rstd outputs: d mean/dx = 1/n, d rstd/dx = -rstd^3 (x - mean) / n."""
    extra = None
    if gmean is not None:
        extra = (gmean / n).expand(tuple(xv.shape))
    if grstd is not None:
        t = -grstd * rstd * rstd * rstd * (xv - mean) / n
        extra = t if extra is None else extra + t
    return extra


def _add_input(out, extra, shape):
    if extra is not None:
        extra = extra.reshape(shape)
        out["input"] = extra if out.get("input") is None else out["input"] + extra
    return out


def _ln_axes(x, normalized_shape):
    return tuple(range(x.dim() - len(normalized_shape), x.dim()))


def _ln_backward_composite(normalized_shape, mask):
    """native_layer_norm_backward written with differentiable operators."""

    def f(go, x, mean, rstd, w):
        axes = _ln_axes(x, normalized_shape)
        lead = tuple(range(x.dim() - len(normalized_shape)))
        xhat = (x - mean) * rstd
        dxh = go * w if w is not None else go
        gi = rstd * (
            dxh - dxh.mean(axes, keepdim=True) - xhat * (dxh * xhat).mean(axes, keepdim=True)
        )
        gw = ((go * xhat).sum(lead) if lead else go * xhat) if mask[1] else None
        gb = (go.sum(lead) if lead else go) if mask[2] else None
        return (gi if mask[0] else None), gw, gb

    return f


@formula("native_layer_norm", needs_result=(1, 2))  # mean and rstd, not the output
def _native_layer_norm(g, a):
    g0, gmean, grstd = g if isinstance(g, tuple) else (g, None, None)
    x, shape, w, b = a["input"], a["normalized_shape"], a["weight"], a["bias"]
    _, mean, rstd = a["results"]
    out = {}
    if g0 is not None:
        gi, gw, gb = F.native_layer_norm_backward(
            g0, x, shape, mean, rstd, w, b, [True, w is not None, b is not None]
        )
        out = {"input": gi, "weight": gw, "bias": gb}
    n = 1
    for s in shape:
        n *= s
    return _add_input(out, _stats_grad(x, mean, rstd, gmean, grstd, n), tuple(x.shape))


@formula("native_layer_norm_backward")
def _native_layer_norm_backward(g, a):
    f = _ln_backward_composite(a["normalized_shape"], [bool(m) for m in a["output_mask"]])
    names = ("grad_out", "input", "mean", "rstd", "weight")
    primals = [a[n] for n in names]
    cot = [c if isinstance(c, F.Tensor) else None for c in g]
    grads = _vjp(f, primals, cot)
    return {n: gr for n, gr in zip(names, grads) if gr is not None}


@composite("layer_norm")
def _layer_norm(call, a):
    return call(
        "native_layer_norm", a["input"], a["normalized_shape"], a["weight"], a["bias"], a["eps"]
    )[0]


@formula("native_batch_norm", needs_result=(1, 2))  # the saved stats, not the output
def _native_batch_norm(g, a):
    go, gmean, grstd = g if isinstance(g, tuple) else (g, None, None)
    x, w, b = a["input"], a["weight"], a["bias"]
    _, save_mean, save_invstd = a["results"]
    out = {}
    if a["training"] and (gmean is not None or grstd is not None):
        shape = [1] * x.dim()
        shape[1] = x.shape[1]
        extra = _stats_grad(
            x,
            save_mean.reshape(shape),
            save_invstd.reshape(shape),
            None if gmean is None else gmean.reshape(shape),
            None if grstd is None else grstd.reshape(shape),
            x.numel() // max(x.shape[1], 1),
        )
        out = _add_input(out, extra, tuple(x.shape))
    if go is None:
        return out
    gi, gw, gb = F.native_batch_norm_backward(
        go,
        a["input"],
        w,
        a["running_mean"],
        a["running_var"],
        save_mean,
        save_invstd,
        a["training"],
        a["eps"],
        [True, w is not None, b is not None],
    )
    out = _add_input(out, gi, tuple(x.shape))
    out.update(weight=gw, bias=gb)
    if not a["training"] and a["running_mean"] is not None:
        out.update(_running_stats_grad(go, x, w, a["running_mean"], a["running_var"], a["eps"]))
    return out


def _running_stats_grad(go, x, w, rm, rv, eps):
    """Evaluation mode normalises with the running stats, so the output depends on them."""
    shape = [1] * x.dim()
    shape[1] = x.shape[1]
    dims = tuple(i for i in range(x.dim()) if i != 1)
    invstd = (rv + eps).rsqrt()
    k = invstd * w if w is not None else invstd
    g_rm = -(go.sum(dims) * k)
    g_rv = (go * (x - rm.reshape(shape))).sum(dims) * k * (-0.5) * invstd * invstd
    return {"running_mean": g_rm, "running_var": g_rv}


def _bn_backward_composite(train, eps, mask):
    """native_batch_norm_backward written with differentiable operators. Training
    normalises with the saved batch stats (which are outputs of the forward, so
    gradients reaching them flow on through its formula), evaluation with the
    running stats."""

    def f(go, x, w, rm, rv, save_mean, save_invstd):
        shape = [1] * x.dim()
        shape[1] = x.shape[1]
        dims = tuple(i for i in range(x.dim()) if i != 1)
        if train or rm is None:
            mean, invstd = save_mean.reshape(shape), save_invstd.reshape(shape)
        else:
            mean, invstd = rm.reshape(shape), (rv + eps).rsqrt().reshape(shape)
        xhat = (x - mean) * invstd
        k = invstd * w.reshape(shape) if w is not None else invstd
        if train:
            gi = k * (
                go - go.mean(dims, keepdim=True) - xhat * (go * xhat).mean(dims, keepdim=True)
            )
        else:
            gi = go * k
        gw = (go * xhat).sum(dims) if mask[1] else None
        gb = go.sum(dims) if mask[2] else None
        return (gi if mask[0] else None), gw, gb

    return f


@formula("native_batch_norm_backward")
def _native_batch_norm_backward(g, a):
    # As for layer norm: the forward formula keeps the fast kernel, and the kernel's
    # own derivative differentiates its composite (batch norm's double backward).
    f = _bn_backward_composite(a["train"], float(a["eps"]), [bool(m) for m in a["output_mask"]])
    names = (
        "grad_out", "input", "weight", "running_mean", "running_var", "save_mean", "save_invstd",
    )  # fmt: skip
    grads = _vjp(f, [a[n] for n in names], [c if isinstance(c, F.Tensor) else None for c in g])
    return {n: gr for n, gr in zip(names, grads) if gr is not None}


@composite("batch_norm")
def _batch_norm(call, a):
    return call(
        "native_batch_norm",
        a["input"],
        a["weight"],
        a["bias"],
        a["running_mean"],
        a["running_var"],
        a["training"],
        a["momentum"],
        a["eps"],
    )[0]


@formula("native_group_norm", needs_result=(1, 2))  # mean and rstd, not the output
def _native_group_norm(g, a):
    go, gmean, grstd = g if isinstance(g, tuple) else (g, None, None)
    x, w, b = a["input"], a["weight"], a["bias"]
    n, group = a["N"], a["group"]
    _, mean, rstd = a["results"]
    out = {}
    if gmean is not None or grstd is not None:
        xv = x.reshape(n, group, -1)
        extra = _stats_grad(
            xv,
            mean.reshape(n, group, 1),
            rstd.reshape(n, group, 1),
            None if gmean is None else gmean.reshape(n, group, 1),
            None if grstd is None else grstd.reshape(n, group, 1),
            xv.shape[2],
        )
        out = _add_input(out, extra, tuple(x.shape))
    if go is None:
        return out
    gi, gw, gb = F.native_group_norm_backward(
        go,
        a["input"],
        mean,
        rstd,
        w,
        a["N"],
        a["C"],
        a["HxW"],
        a["group"],
        [True, w is not None, b is not None],
    )
    out = _add_input(out, gi, tuple(x.shape))
    return {**out, "weight": gw, "bias": gb}


def _gn_backward_composite(n, c, group, mask):
    """native_group_norm_backward written with differentiable operators."""

    def f(go, x, mean, rstd, w):
        xv = x.reshape(n, group, -1)
        xhat = (xv - mean.reshape(n, group, 1)) * rstd.reshape(n, group, 1)
        dxh = go.reshape(n, c, -1)
        if w is not None:
            dxh = dxh * w.reshape(1, c, 1)
        dxh = dxh.reshape(n, group, -1)
        gi = rstd.reshape(n, group, 1) * (
            dxh - dxh.mean(2, keepdim=True) - xhat * (dxh * xhat).mean(2, keepdim=True)
        )
        go3 = go.reshape(n, c, -1)
        gw = (go3 * xhat.reshape(n, c, -1)).sum((0, 2)) if mask[1] else None
        gb = go3.sum((0, 2)) if mask[2] else None
        return (gi.reshape(tuple(x.shape)) if mask[0] else None), gw, gb

    return f


@formula("native_group_norm_backward")
def _native_group_norm_backward(g, a):
    # Same scheme as layer and batch norm: differentiate the backward's composite.
    mask = [bool(m) for m in a["output_mask"]]
    f = _gn_backward_composite(a["N"], a["C"], a["group"], mask)
    names = ("grad_out", "input", "mean", "rstd", "weight")
    grads = _vjp(f, [a[n] for n in names], [c if isinstance(c, F.Tensor) else None for c in g])
    return {n: gr for n, gr in zip(names, grads) if gr is not None}


@composite("group_norm")
def _group_norm(call, a):
    x = a["input"]
    n, c = x.shape[0], x.shape[1]
    hxw = x.numel() // (n * c) if n * c else 0
    return call(
        "native_group_norm", x, a["weight"], a["bias"], n, c, hxw, a["num_groups"], a["eps"]
    )[0]


@composite("instance_norm")
def _instance_norm(call, a):
    x = a["input"]
    n, c = x.shape[0], x.shape[1]
    shape = (1, n * c) + tuple(x.shape[2:])

    def rep(v):  # (C,) -> (N * C,), recorded
        if v is None:
            return None
        return call("reshape", call("expand", call("unsqueeze", v, 0), (n, c)), (n * c,))

    rm, rv = a["running_mean"], a["running_var"]
    if a["use_input_stats"]:  # batch statistics; the running ones get updated copies
        rm_r = None if rm is None else rm.detach().unsqueeze(0).expand(n, c).reshape(n * c).clone()
        rv_r = None if rv is None else rv.detach().unsqueeze(0).expand(n, c).reshape(n * c).clone()
    else:  # the output depends on the running stats
        rm_r, rv_r = rep(rm), rep(rv)
    out = call(
        "native_batch_norm",
        call("reshape", x, shape),
        rep(a["weight"]),
        rep(a["bias"]),
        rm_r,
        rv_r,
        a["use_input_stats"],
        a["momentum"],
        a["eps"],
    )[0]
    if a["use_input_stats"]:
        with F.autograd.no_grad():
            if rm is not None:
                rm.copy_(rm_r.view(n, c).mean(0))
            if rv is not None:
                rv.copy_(rv_r.view(n, c).mean(0))
    return call("reshape", out, tuple(x.shape))


# ---- losses -----------------------------------------------------------------------


def _norm(x, t, reduction):
    """The scale a mean reduction applies: 1 / numel of the broadcast shape."""
    if reduction != 1:
        return 1.0
    a, b = tuple(x.shape), tuple(t.shape)
    k = max(len(a), len(b))
    a, b = (1,) * (k - len(a)) + a, (1,) * (k - len(b)) + b
    n = 1
    for i, j in zip(a, b):
        n *= j if i == 1 else i
    return 1.0 / max(n, 1)


@formula(
    "nll_loss_forward",
    needs_result=(1,),  # total_weight
    reads={"self": ("self", "target", "weight"), "weight": ("self", "target", "weight")},
)
def _nll_loss_forward(g, a):
    go = _first(g)
    if go is None:
        go = F.zeros(tuple(a["results"][0].shape), dtype=a["self"].dtype)
    x, target, w = a["self"], a["target"], a["weight"]
    red, ignore = a["reduction"], a["ignore_index"]
    total = a["results"][1]
    out = {"self": F.nll_loss_backward(go, x, target, w, red, ignore, total)}
    if needs_grad(w):  # a class weight is usually a constant
        out["weight"] = _nll_weight_grad(go, x, target, w, red, ignore, total)
        gtw = g[1] if isinstance(g, tuple) else None
        if gtw is not None:  # total_weight = sum of weight[target] over counted targets
            safe = F.where(target == ignore, F.zeros_like(target), target)
            counted = (target != ignore).to(x.dtype).unsqueeze(-1)
            dense = F.embedding_dense_backward(counted, safe, w.shape[0], -1, False)
            out["weight"] = out["weight"] + gtw * dense.squeeze(-1)
    return out


def _nll_weight_grad(go, x, target, w, red, ignore, total):
    """d loss / d weight[k]: the picked -x of targets of class k (scattered with
    embedding_dense_backward); for mean, minus loss * count_k, over the total weight.
    The loss is recomputed: as in PyTorch, the forward saves only total_weight."""
    c = w.shape[0]
    picked = F.nll_loss_forward(x, target, None, 0, ignore)[0]  # -x at each target, 0 ignored
    counted = (target != ignore).to(x.dtype)
    safe = F.where(target == ignore, F.zeros_like(target), target)

    def scatter(v):
        return F.embedding_dense_backward(v.unsqueeze(-1), safe, c, -1, False).squeeze(-1)

    if red == 0:
        return scatter(go * picked)
    if red == 2:
        return scatter(go * picked)
    loss = F.nll_loss_forward(x, target, w, red, ignore)[0]
    return go * (scatter(picked) - loss * scatter(counted)) / total


@formula("nll_loss_backward", needs_result=True)
def _nll_loss_backward(g, a):
    # Linear in grad_output: gathering g at the targets is nll_loss_forward itself.
    # (For mean, nll_loss_forward divides by the same total weight as the backward.)
    go = a["grad_output"]
    r = F.nll_loss_forward(g, a["target"], a["weight"], a["reduction"], a["ignore_index"])[0]
    out = {"grad_output": r.reshape(tuple(go.shape))}
    tw, w, target, ignore = a["total_weight"], a["weight"], a["target"], a["ignore_index"]
    if a["reduction"] == 1 and isinstance(tw, F.Tensor):  # the result is divided by it
        out["total_weight"] = -(g * a["result"]).sum() / tw
    if w is not None:  # the result holds -weight[t] * grad_output at each target
        go_eff = go / tw if a["reduction"] == 1 else go
        picked = F.nll_loss_forward(g, target, None, 0, ignore)[0]
        safe = F.where(target == ignore, F.zeros_like(target), target)
        v = (picked * go_eff).unsqueeze(-1)
        out["weight"] = F.embedding_dense_backward(v, safe, w.shape[0], -1, False).squeeze(-1)
    return out


@composite("nll_loss")
def _nll_loss(call, a):
    return call(
        "nll_loss_forward", a["self"], a["target"], a["weight"], a["reduction"], a["ignore_index"]
    )[0]


@composite("cross_entropy_loss")
def _cross_entropy_loss(call, a):
    x, target, weight = a["self"], a["target"], a["weight"]
    reduction, ignore, ls = a["reduction"], a["ignore_index"], a["label_smoothing"]
    cdim = 0 if x.dim() == 1 else 1
    c = x.shape[cdim]
    logp = call("log_softmax", x, cdim)
    wb = None
    if weight is not None:
        shape = [1] * x.dim()
        shape[cdim] = c
        wb = call("reshape", weight, tuple(shape))
    if target.dtype.is_floating_point:
        tp = target if ls <= 0 else call("add", call("mul", target, 1 - ls), ls / c)
        prod = call("mul", logp, tp)
        if wb is not None:
            prod = call("mul", prod, wb)
        loss = call("neg", call("sum", prod, cdim))
        if reduction == 0:
            return loss
        total = call("sum", loss)
        if reduction == 2:
            return total
        return call("div", total, float(x.numel() // c) if c else 0.0)
    nll, total_weight = call("nll_loss_forward", logp, target, weight, reduction, ignore)
    if ls <= 0:
        return nll
    lw = call("mul", logp, wb) if wb is not None else logp
    smooth = call("neg", call("sum", lw, cdim))
    smooth = call("where", target == ignore, F.zeros((), dtype=logp.dtype), smooth)
    if reduction == 2:
        smooth = call("sum", smooth)
    elif reduction == 1:
        smooth = call("div", call("sum", smooth), total_weight)
    return call("add", call("mul", nll, 1 - ls), call("mul", smooth, ls / c))


def _pair(gx, x, t):
    out = {"self": gx}
    if isinstance(t, F.Tensor) and t.dtype.is_floating_point:
        out["target"] = -gx
    return out


@formula("mse_loss", reads={"self": ("self", "target"), "target": ("self", "target")})
def _mse_loss(g, a):
    x, t = a["self"], a["target"]
    return _pair(F.mse_loss_backward(g, x, t, a["reduction"]), x, t)


@formula("mse_loss_backward")
def _mse_loss_backward(g, a):
    go, x, t = a["grad_output"], a["self"], a["target"]
    k = 2.0 * _norm(x, t, a["reduction"])
    gx = g * go * k
    return {"grad_output": g * (x - t) * k, "self": gx, "target": -gx}


@composite("l1_loss")
def _l1_loss(call, a):
    loss = call("abs", call("sub", a["self"], a["target"]))
    if a["reduction"] == 1:
        return call("mean", loss)
    if a["reduction"] == 2:
        return call("sum", loss)
    return loss


@formula("smooth_l1_loss")
def _smooth_l1_loss(g, a):
    x, t = a["self"], a["target"]
    if a["beta"] == 0:
        d = g * F.sign(x - t) * _norm(x, t, a["reduction"])
        return _pair(d, x, t)
    return _pair(F.smooth_l1_loss_backward(g, x, t, a["reduction"], a["beta"]), x, t)


@formula("smooth_l1_loss_backward")
def _smooth_l1_loss_backward(g, a):
    go, x, t, beta = a["grad_output"], a["self"], a["target"], a["beta"]
    k = _norm(x, t, a["reduction"])
    inside = (x - t).abs() < beta
    gx = _where(inside, g * go * (k / beta), x - t)
    return {
        "grad_output": F.smooth_l1_loss_backward(g, x, t, 0, beta) * k,
        "self": gx,
        "target": -gx,
    }


@formula("huber_loss")
def _huber_loss(g, a):
    x, t = a["self"], a["target"]
    return _pair(F.huber_loss_backward(g, x, t, a["reduction"], a["delta"]), x, t)


@formula("huber_loss_backward")
def _huber_loss_backward(g, a):
    go, x, t, delta = a["grad_output"], a["self"], a["target"], a["delta"]
    k = _norm(x, t, a["reduction"])
    inside = (x - t).abs() < delta
    gx = _where(inside, g * go * k, x - t)
    return {
        "grad_output": F.huber_loss_backward(g, x, t, 0, delta) * k,
        "self": gx,
        "target": -gx,
    }


@formula("binary_cross_entropy")
def _binary_cross_entropy(g, a):
    x, t, w, red = a["self"], a["target"], a["weight"], a["reduction"]
    out = {"self": F.binary_cross_entropy_backward(g, x, t, w, red)}
    if w is not None:
        out["weight"] = g * F.binary_cross_entropy(x, t, None, 0) * _norm(x, t, red)
    if t.dtype.is_floating_point:
        gt = g * (F.log1p(-x).clamp_min(-100) - F.log(x).clamp_min(-100)) * _norm(x, t, red)
        out["target"] = gt * w if w is not None else gt
    return out


_BCE_EPS = 1e-12  # the kernel divides by max(x (1 - x), eps)


@formula("binary_cross_entropy_backward")
def _binary_cross_entropy_backward(g, a):
    # Pointwise in x and t: the backward is go * w * k * (x - t) / D with D = x (1 - x),
    # k the mean's 1/n; written out here so that its derivatives are differentiable too.
    go, x, t, w, red = a["grad_output"], a["self"], a["target"], a["weight"], a["reduction"]
    k = _norm(x, t, red)
    d = x * (1 - x)
    clamped = d <= _BCE_EPS
    inv_d = 1 / F.where(clamped, F.full((), _BCE_EPS, dtype=x.dtype), d)
    ratio = (x - t) * inv_d  # d(ratio)/dx = (D - (x - t)(1 - 2x)) / D^2 where unclamped
    dratio = F.where(clamped, inv_d, (1 - (x - t) * (1 - 2 * x) * inv_d) * inv_d)
    scale = g * k if w is None else g * k * w
    out = {"grad_output": scale * ratio, "self": scale * go * dratio}
    if t.dtype.is_floating_point:
        out["target"] = -scale * go * inv_d
    if w is not None:
        out["weight"] = g * go * k * ratio
    return out


@composite("binary_cross_entropy_with_logits")
def _bce_with_logits(call, a):
    x, t, w, pw, red = a["self"], a["target"], a["weight"], a["pos_weight"], a["reduction"]
    # (1 - t) x - (1 + (pw - 1) t) log_sigmoid(x)
    ls = call("log_sigmoid", x)
    lw = call("add", call("mul", call("sub", pw, 1.0), t), 1.0) if pw is not None else None
    term = call("mul", lw, ls) if lw is not None else ls
    loss = call("sub", call("mul", call("rsub", t, 1.0), x), term)
    if w is not None:
        loss = call("mul", loss, w)
    if red == 1:
        return call("mean", loss)
    if red == 2:
        return call("sum", loss)
    return loss


@composite("kl_div")
def _kl_div(call, a):
    x, t, red = a["self"], a["target"], a["reduction"]
    if a["log_target"]:
        loss = call("mul", call("exp", t), call("sub", t, x))
    else:
        logt = call("log", call("where", t > 0, t, F.ones((), dtype=t.dtype)))
        loss = call("mul", t, call("sub", logt, x))
    if red == 1:
        return call("mean", loss)
    if red == 2:
        return call("sum", loss)
    return loss
