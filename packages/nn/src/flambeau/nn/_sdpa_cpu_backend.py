"""PyTorch's choice of a scaled_dot_product_attention kernel for CPU tensors, under the
enabled flags (flambeau.backends.cuda's ``enable_*_sdp``, flambeau.nn.attention's
``sdpa_kernel``).

PyTorch's CPU has two kernels: flash attention, which takes only some inputs, and math,
which takes any. flambeau computes both with its one fused operator, so the choice changes
no result; what matters is when no enabled kernel can take the inputs, where PyTorch
raises: both disabled ("No viable backend..."), or flash alone enabled and unsuited
(warnings saying why, then "No available kernel..."). Inputs PyTorch rejects before it
chooses (mismatched dtypes, fewer than 2 dimensions...) are left to the operator's own
errors, and empty inputs need no kernel.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import flambeau
from flambeau._arg_checks import dtype_name, torch_type_name
from flambeau.backends._sdp import ENABLED

_FLASH_DTYPES = (flambeau.float32, flambeau.float64, flambeau.bfloat16, flambeau.float16)


class _Inputs(NamedTuple):
    query: flambeau.Tensor
    key: flambeau.Tensor
    value: flambeau.Tensor
    attn_mask: flambeau.Tensor | None
    dropout_p: float
    enable_gqa: bool


def check_cpu_backend(query, key, value, attn_mask, dropout_p, enable_gqa) -> None:
    """Raises PyTorch's RuntimeError when no enabled CPU kernel can take these inputs;
    returns when one can (always, while the math kernel is enabled)."""
    if ENABLED["math"] or query.device.type != "cpu":
        return
    inputs = _Inputs(query, key, value, attn_mask, dropout_p, enable_gqa)
    if not _passes_validation(inputs) or any(t.numel() == 0 for t in (query, key, value)):
        return
    if not ENABLED["flash"]:
        raise RuntimeError(
            "No viable backend for scaled_dot_product_attention was found. This is likely due "
            "to turning off both the math kernel and the fused kernels."
        )
    reason = _flash_refusal(inputs)
    if reason is None:
        return
    # stacklevel 3: the caller of flambeau.nn.functional.scaled_dot_product_attention.
    warnings.warn("Flash attention kernel not used because:", stacklevel=3)
    if reason:
        warnings.warn(reason, stacklevel=3)
    raise RuntimeError("No available kernel.  Aborting execution.")


def _passes_validation(p: _Inputs) -> bool:
    """What PyTorch checks before it chooses a kernel (the operator raises otherwise)."""
    q, k, v, mask = p.query, p.key, p.value, p.attn_mask
    return (
        q.dtype == k.dtype == v.dtype
        and q.device == k.device == v.device
        and min(q.dim(), k.dim(), v.dim()) >= 2
        and (mask is None or mask.dtype in (flambeau.bool, q.dtype))
    )


def _flash_refusal(p: _Inputs) -> str | None:
    """Why PyTorch's CPU flash kernel cannot take these inputs (the warning it gives, ""
    where it gives none); None when it can. Checked in PyTorch's order."""
    for check in _FLASH_CHECKS:
        reason = check(p)
        if reason is not None:
            return reason
    return None


def _no_dropout(p: _Inputs) -> str | None:
    if p.dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    return None


def _four_dimensional(p: _Inputs) -> str | None:
    dims = (p.query.dim(), p.key.dim(), p.value.dim())
    if dims != (4, 4, 4):
        return (
            "All fused kernels requires query, key and value to be 4 dimensional, but got "
            f"Query dim: {dims[0]}, Key dim: {dims[1]}, Value dim: {dims[2]} instead."
        )
    return None


def _batch_and_heads(p: _Inputs) -> str | None:
    q, k, v = (list(t.shape) for t in (p.query, p.key, p.value))
    if not q[0] == k[0] == v[0]:
        return (
            "For dense inputs, both fused kernels require query, key and value to have the "
            f"same batch_size. Query.sizes(): {q}, Key.sizes(): {k}, Value.sizes(): {v} "
            "instead. To broadcast dense inputs, try using unsqueeze and expand_to before "
            "passing them into the kernel."
        )
    if p.enable_gqa:
        if k[-3] != v[-3]:
            return (
                "Both fused kernels require key and value to have the same num_heads and "
                f"batch_size but got: Key sizes: {k}, Value sizes: {v}, Query sizes: {q} "
                "instead."
            )
        if q[-3] % k[-3]:
            return (
                "The number of heads in key/value must divide number of heads in query."
                f"Got input Key sizes(): {k[-3]}, Value sizes(): {v[-3]}, Query sizes(): "
                f"{q[-3]} instead."
            )
        return None
    if not q[-3] == k[-3] == v[-3]:
        return (
            "For dense input, both fused kernels require query, key and value to have the "
            f"same num_heads. Query.sizes(): {q}, Key sizes(): {k}, Value sizes(): {v} "
            "instead. To broadcast dense inputs, try using unsqueeze and expand_to before "
            "passing them into the kernel."
        )
    return None


def _mask_shape(p: _Inputs) -> str | None:
    mask = p.attn_mask
    if mask is None:
        return None
    if mask.requires_grad:
        return ""
    batch, heads, q_len = p.query.shape[:3]
    kv_len = p.key.shape[2]
    if mask.size(-2) not in (q_len, 1) or mask.size(-1) not in (kv_len, 1):
        return ""
    if mask.dim() == 2:
        return None
    if mask.dim() == 4 and mask.shape[0] in (1, batch) and mask.shape[1] in (1, heads):
        return None
    return (
        "Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); "
        "4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1})"
    )


def _same_head_dim(p: _Inputs) -> str | None:
    e_q, e_k, e_v = p.query.shape[-1], p.key.shape[-1], p.value.shape[-1]
    if not e_q == e_k == e_v:
        return (
            "Flash attention requires q,k,v to have the same last dimension. Got "
            f"Query.size(-1): {e_q}, Key.size(-1): {e_k}, Value.size(-1): {e_v} instead."
        )
    return None


def _unit_last_stride(p: _Inputs) -> str | None:
    strides = [t.stride(-1) for t in (p.query, p.key, p.value)]
    if strides == [1, 1, 1]:
        return None
    mask = "" if p.attn_mask is None else (
        f", Attn_mask.stride(-1): {p.attn_mask.stride(-1)} (GPU backends require attn_mask's "
        "last dimension to have stride 1 while the CPU does not)."
    )  # fmt: skip
    return (
        "All fused kernels require the last dimension of the input to have stride 1. Got "
        f"Query.stride(-1): {strides[0]}, Key.stride(-1): {strides[1]}, "
        f"Value.stride(-1): {strides[2]}{mask}"
    )


def _flash_dtype(p: _Inputs) -> str | None:
    if p.query.dtype in _FLASH_DTYPES:  # key and value have it too (validation)
        return None
    allowed = ", ".join(torch_type_name(d) for d in _FLASH_DTYPES)
    q, k, v = (dtype_name(t.dtype) for t in (p.query, p.key, p.value))
    return (
        f"Expected query, key and value to all be of dtype: {{{allowed}}}. Got Query dtype: "
        f"{q}, Key dtype: {k}, and Value dtype: {v} instead."
    )


_FLASH_CHECKS = (
    _no_dropout,
    _four_dimensional,
    _batch_and_heads,
    _mask_shape,
    _same_head_dim,
    _unit_last_stride,
    _flash_dtype,
)
