"""Attention functions of ``flambeau.nn.functional``: scaled_dot_product_attention (the
core's fused operator) and multi_head_attention_forward, composed from matmul, softmax and
dropout."""

from __future__ import annotations

import math

import flambeau
from flambeau._arg_checks import check_tensor as _check_tensor
from flambeau.overrides import _dispatch_on, handle_torch_function, has_torch_function_variadic

from ._sdpa_cpu_backend import check_cpu_backend

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _shape(t) -> tuple:
    return tuple(t.shape)


def _additive_mask(mask, like, allowed_when_true: bool):
    """A float mask to add to attention scores: 0 where attending is allowed, -inf elsewhere."""
    if mask.dtype == flambeau.bool:
        blocked = ~mask if allowed_when_true else mask
        zeros = flambeau.zeros(_shape(mask), dtype=like.dtype, device=like.device)
        return zeros.masked_fill(blocked, float("-inf"))
    if not mask.is_floating_point():
        raise TypeError(f"attention masks must be bool or floating point, got {mask.dtype}")
    return mask.to(like.dtype)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False):  # fmt: skip
    """softmax(Q K^T * scale + mask) V with query (..., L, E), key (..., S, E), value (..., S, Ev).

    A bool attn_mask marks with True the positions that may be attended; a float one is added
    to the scores. is_causal masks out the upper triangle (and excludes attn_mask). The core's
    fused operator (flash-attention style forward and backward kernels) computes it whichever
    backend is enabled; with the math backend disabled (flambeau.nn.attention.sdpa_kernel),
    CPU inputs that PyTorch's flash kernel cannot take raise PyTorch's RuntimeError.

    >>> import flambeau.nn.functional as F
    >>> q = flambeau.tensor([[[1.0, 0.0]]])
    >>> k = flambeau.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    >>> v = flambeau.tensor([[[10.0, 0.0], [0.0, 10.0]]])
    >>> F.scaled_dot_product_attention(q, k, v, scale=2.0)
    tensor([[[8.8080, 1.1920]]])
    >>> F.scaled_dot_product_attention(k, k, v, is_causal=True)
    tensor([[[10.0000,  0.0000],
             [ 3.3024,  6.6976]]])
    """
    if has_torch_function_variadic(query, key, value, attn_mask):
        return handle_torch_function(
            scaled_dot_product_attention,
            (query, key, value, attn_mask),
            query,
            key,
            value,
            attn_mask=attn_mask,
            dropout_p=dropout_p,
            is_causal=is_causal,
            scale=scale,
            enable_gqa=enable_gqa,
        )
    _check_tensor("scaled_dot_product_attention", "query", 1, query)
    _check_tensor("scaled_dot_product_attention", "key", 2, key)
    _check_tensor("scaled_dot_product_attention", "value", 3, value)
    _check_tensor("scaled_dot_product_attention", "attn_mask", 4, attn_mask, optional=True)
    check_cpu_backend(query, key, value, attn_mask, dropout_p, enable_gqa)
    return flambeau.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask,
        dropout_p,
        is_causal,
        scale=None if scale is None else float(scale),
        enable_gqa=enable_gqa,
    )


def _in_projection(q, k, v, w, b, embed_dim, separate, q_w, k_w, v_w):
    def lin(x, weight, bias):
        out = flambeau.matmul(x, weight.t())
        return out if bias is None else out + bias

    if not separate:
        if w is None:
            raise RuntimeError("multi_head_attention_forward(): in_proj_weight is None")
        _check_tensor("multi_head_attention_forward", "in_proj_weight", 6, w)
        _check_tensor("multi_head_attention_forward", "in_proj_bias", 7, b, optional=True)
        ws = w.split(embed_dim, 0)
        bs = b.split(embed_dim, 0) if b is not None else (None, None, None)
        return lin(q, ws[0], bs[0]), lin(k, ws[1], bs[1]), lin(v, ws[2], bs[2])
    if q_w is None or k_w is None or v_w is None:
        raise RuntimeError(
            "multi_head_attention_forward(): use_separate_proj_weight is True but "
            "q_proj_weight, k_proj_weight or v_proj_weight is None"
        )
    bs = b.split(embed_dim, 0) if b is not None else (None, None, None)
    return lin(q, q_w, bs[0]), lin(k, k_w, bs[1]), lin(v, v_w, bs[2])


@_dispatch_on(
    "query",
    "key",
    "value",
    "in_proj_weight",
    "in_proj_bias",
    "bias_k",
    "bias_v",
    "out_proj_weight",
    "out_proj_bias",
)
def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v,
                                 add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):  # fmt: skip
    """Multi-head attention on sequence-first inputs (L, N, E) / (S, N, E), or unbatched (L, E).

    Returns (output (L, N, E), weights (N, L, S) averaged over heads, or (N, H, L, S), or None).
    Bool masks mark with True the positions that may NOT be attended.

    >>> import flambeau.nn.functional as F
    >>> L, N, E, heads = 3, 2, 4, 2
    >>> q = flambeau.randn(L, N, E)
    >>> out, w = F.multi_head_attention_forward(q, q, q, E, heads, flambeau.randn(3 * E, E),
    ...     flambeau.zeros(3 * E), None, None, False, 0.0, flambeau.randn(E, E), flambeau.zeros(E))
    >>> out.shape, w.shape
    (flambeau.Size([3, 2, 4]), flambeau.Size([2, 3, 3]))
    """
    fn = "multi_head_attention_forward()"
    unbatched = query.dim() == 2
    if query.dim() not in (2, 3) or key.dim() != query.dim() or value.dim() != query.dim():
        raise RuntimeError(
            f"{fn}: query, key and value must all be 3-D (L, N, E) or 2-D (L, E), got "
            f"{_shape(query)}, {_shape(key)}, {_shape(value)}"
        )
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = _shape(query)
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise RuntimeError(
            f"{fn}: was expecting embedding dimension of {embed_dim_to_check}, but got "
            f"{embed_dim} (query of shape {_shape(query)})"
        )
    if embed_dim % num_heads:
        raise RuntimeError(f"{fn}: embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key.shape[:2] != value.shape[:2] or key.shape[1] != bsz:
        raise RuntimeError(
            f"{fn}: key {_shape(key)} and value {_shape(value)} must share (S, N) with batch "
            f"{bsz} of query {_shape(query)}"
        )
    if is_causal and attn_mask is None:
        raise RuntimeError(f"{fn}: Need attn_mask if specifying the is_causal hint")
    head_dim = embed_dim // num_heads
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, embed_dim,
                             use_separate_proj_weight, q_proj_weight, k_proj_weight,
                             v_proj_weight)  # fmt: skip

    mask = None
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if _shape(attn_mask) != (tgt_len, src_len):
                raise RuntimeError(
                    f"{fn}: the shape of the 2D attn_mask is {_shape(attn_mask)}, but should be "
                    f"{(tgt_len, src_len)}"
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if _shape(attn_mask) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"{fn}: the shape of the 3D attn_mask is {_shape(attn_mask)}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}"
                )
        else:
            raise RuntimeError(f"{fn}: attn_mask's dimension {attn_mask.dim()} is not supported")
        mask = _additive_mask(attn_mask, q, allowed_when_true=False)

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise RuntimeError(f"{fn}: bias cannot be added to static key/value")
        k = flambeau.cat([k, bias_k.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim)], 0)
        v = flambeau.cat([v, bias_v.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim)], 0)
        if mask is not None:
            mask = flambeau.constant_pad_nd(mask, [0, 1], 0.0)
        if key_padding_mask is not None:
            key_padding_mask = flambeau.constant_pad_nd(key_padding_mask, [0, 1], 0)
    elif (bias_k is None) != (bias_v is None):
        raise RuntimeError(f"{fn}: bias_k and bias_v must both be given or both be None")

    # (L, N, E) -> (N*H, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_k is None else static_k)  # fmt: skip
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_v is None else static_v)  # fmt: skip
    if add_zero_attn:
        zeros = flambeau.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = flambeau.cat([k, zeros], 1)
        v = flambeau.cat([v, zeros], 1)
        if mask is not None:
            mask = flambeau.constant_pad_nd(mask, [0, 1], 0.0)
        if key_padding_mask is not None:
            key_padding_mask = flambeau.constant_pad_nd(key_padding_mask, [0, 1], 0)
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if _shape(key_padding_mask) != (bsz, src_len):
            raise RuntimeError(
                f"{fn}: expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                f"{_shape(key_padding_mask)}"
            )
        kpm = _additive_mask(key_padding_mask, q, allowed_when_true=False)
        kpm = kpm.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        mask = kpm if mask is None else mask + kpm

    if not training:
        dropout_p = 0.0
    scores = flambeau.matmul(q * (1.0 / math.sqrt(head_dim)), k.transpose(-2, -1))
    if mask is not None:
        scores = scores + mask
    weights = flambeau.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = flambeau.dropout(weights, dropout_p, True)
    out = flambeau.matmul(weights, v)  # (N*H, L, head_dim)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    _check_tensor("multi_head_attention_forward", "out_proj_weight", 12, out_proj_weight)
    _check_tensor("multi_head_attention_forward", "out_proj_bias", 13, out_proj_bias, optional=True)
    out = flambeau.matmul(out, out_proj_weight.t())
    if out_proj_bias is not None:
        out = out + out_proj_bias
    out = out.reshape(tgt_len, bsz, embed_dim)
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    if unbatched:
        weights = weights.squeeze(0)
    return out, weights
