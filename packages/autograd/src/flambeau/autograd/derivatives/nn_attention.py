"""Formulas of scaled dot-product attention.

The fused forward's formula calls the fused backward kernel. Its other cases
(a float attn_mask that requires grad, a gradient flowing into logsumexp) and
the backward kernel's own formula (double backward) go through ``_math``, the
same attention written with differentiable operators, replaying the forward's
dropout mask from its Philox seed and offset.
"""

from __future__ import annotations

import math

import flambeau as F

from .helpers import sum_to
from .nn import _vjp
from .registry import composite, formula

_FORWARD = "_scaled_dot_product_attention_forward"


def _repeat_heads(q, t, enable_gqa):
    """t with each head (dim -3) repeated for the query heads sharing it (grouped-query
    attention), as repeat_interleave(hq // ht, -3)."""
    if not enable_gqa or q.dim() < 3 or t.dim() < 3:
        return t
    hq, ht = q.shape[-3], t.shape[-3]
    if ht in (hq, 0, 1):
        return t
    shape = tuple(t.shape)
    wide = shape[:-2] + (hq // ht,) + shape[-2:]
    return t.unsqueeze(-3).expand(wide).reshape(shape[:-3] + (hq,) + shape[-2:])


def _keep_mask(a, shape, dtype):
    """The forward's dropout keep mask (0/1 in dtype): the same Philox draws as bernoulli_."""
    gen = F.Generator()
    gen.set_state((int(a["philox_seed"].item()), int(a["philox_offset"].item())))
    return F.empty(shape, dtype=dtype).bernoulli_(1.0 - a["dropout_p"], generator=gen)


def _math(a, q, k, v, mask=None):
    """(output, logsumexp) of the attention, differentiable in q, k, v and a float mask
    (mask; a["attn_mask"] when None)."""
    mask = a["attn_mask"] if mask is None else mask
    k = _repeat_heads(q, k, a["enable_gqa"])
    v = _repeat_heads(q, v, a["enable_gqa"])
    scale = a["scale"]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = F.matmul(q, k.transpose(-2, -1)) * scale
    L, S = q.shape[-2], k.shape[-2]
    neg_inf = F.full((), -math.inf, dtype=scores.dtype)
    if a["is_causal"]:
        scores = F.where(F.ones((L, S), dtype=F.bool).tril(), scores, neg_inf)
    elif mask is not None and mask.dtype == F.bool:
        scores = F.where(mask, scores, neg_inf)
    elif mask is not None:
        scores = scores + mask
    # Fully masked rows give zero weights (as PyTorch); they compute on zeros so
    # that no NaN reaches the gradients.
    dead = (scores == -math.inf).all(-1, keepdim=True)
    live = F.where(dead, F.zeros((), dtype=scores.dtype), scores)
    lse = F.logsumexp(live, -1, keepdim=True)
    weights = F.where(dead, F.zeros((), dtype=scores.dtype), F.exp(live - lse))
    p = a["dropout_p"]
    if p > 0:
        keep = _keep_mask(a, tuple(weights.shape), weights.dtype)
        weights = weights * keep * (0.0 if p == 1 else 1.0 / (1.0 - p))
    out = F.matmul(weights, v)
    return out, F.where(dead, neg_inf, lse).squeeze(-1)


def _float_mask(a):
    m = a["attn_mask"]
    return m if m is not None and m.dtype.is_floating_point else None


@composite("scaled_dot_product_attention")
def _sdpa(call, a):
    return call(
        _FORWARD,
        a["query"],
        a["key"],
        a["value"],
        a["attn_mask"],
        a["dropout_p"],
        a["is_causal"],
        scale=a["scale"],
        enable_gqa=a["enable_gqa"],
    )[0]


@formula(_FORWARD, needs_result=True)
def _sdpa_forward(g, a):
    g_out, g_lse = g[0], g[1]
    out, lse, seed, offset = a["results"]
    mask = _float_mask(a)
    if g_lse is None and (mask is None or not mask.requires_grad):
        if g_out is None:
            return {}
        gq, gk, gv = F._scaled_dot_product_attention_backward(
            g_out,
            a["query"],
            a["key"],
            a["value"],
            out,
            lse,
            seed,
            offset,
            a["dropout_p"],
            a["is_causal"],
            attn_mask=a["attn_mask"],
            scale=a["scale"],
            enable_gqa=a["enable_gqa"],
        )
        return {"query": gq, "key": gk, "value": gv}
    # Replay with the saved Philox state (the results carry it for _keep_mask).
    b = dict(a, philox_seed=seed, philox_offset=offset)
    names = ("query", "key", "value", "attn_mask")
    primals = [a["query"], a["key"], a["value"], mask]
    grads = _vjp(lambda q, k, v, m: _math(b, q, k, v, m), primals, [g_out, g_lse])
    return {n: gr for n, gr in zip(names, grads) if gr is not None}


def _fold(g, x, q, enable_gqa):
    """g (per query head, broadcast batch) summed back to x's shape."""
    if enable_gqa and q.dim() >= 3 and x.dim() >= 3 and x.shape[-3] not in (q.shape[-3], 0, 1):
        shape = tuple(g.shape)
        g = g.reshape(shape[:-3] + (x.shape[-3], q.shape[-3] // x.shape[-3]) + shape[-2:]).sum(-3)
    return sum_to(g, tuple(x.shape))


def _math_backward(a, go, q, k, v, out, lse, mask=None):
    """What the backward kernel computes, differentiable in all of its tensor inputs:
    the weights from scores and the given logsumexp, D = rowsum(grad_out * out)."""
    mask = a["attn_mask"] if mask is None else mask
    kr, vr = _repeat_heads(q, k, a["enable_gqa"]), _repeat_heads(q, v, a["enable_gqa"])
    scale = a["scale"]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = F.matmul(q, kr.transpose(-2, -1)) * scale
    L, S = q.shape[-2], k.shape[-2]
    zero = F.zeros((), dtype=scores.dtype)
    if a["is_causal"]:
        allowed = F.ones((L, S), dtype=F.bool).tril()
    elif mask is not None and mask.dtype == F.bool:
        allowed = mask
    else:
        allowed = None
        if mask is not None:
            scores = scores + mask
    lse = lse.unsqueeze(-1)
    dead = lse == -math.inf
    w = F.exp(F.where(dead, zero, scores) - F.where(dead, zero, lse))
    w = F.where(dead, zero, w) if allowed is None else F.where(allowed & ~dead, w, zero)
    dw = F.matmul(go, vr.transpose(-2, -1))
    p = a["dropout_p"]
    if p > 0:
        f = _keep_mask(a, tuple(w.shape), w.dtype) * (0.0 if p == 1 else 1.0 / (1.0 - p))
        gv = F.matmul((w * f).transpose(-2, -1), go)
        dw = dw * f
    else:
        gv = F.matmul(w.transpose(-2, -1), go)
    ds = w * (dw - (go * out).sum(-1, keepdim=True)) * scale
    gq = F.matmul(ds, kr)
    gk = F.matmul(ds.transpose(-2, -1), q)
    gqa = a["enable_gqa"]
    return _fold(gq, q, q, False), _fold(gk, k, q, gqa), _fold(gv, v, q, gqa)


@formula("_scaled_dot_product_attention_backward")
def _sdpa_backward(g, a):
    names = ("grad_out", "query", "key", "value", "out", "logsumexp", "attn_mask")
    primals = [a[n] for n in names[:-1]] + [_float_mask(a)]
    cot = [c if isinstance(c, F.Tensor) else None for c in g]
    grads = _vjp(lambda *xs: _math_backward(a, *xs), primals, cot)
    return {n: gr for n, gr in zip(names, grads) if gr is not None}
