"""``SDPAParams`` and the questions asked about it: may a fused CUDA attention kernel
(flash, memory-efficient, cuDNN) run these inputs? (PyTorch's torch.backends.cuda.)

The kernels are CUDA code: a CUDA plugin answers when it has the function under
PyTorch's name (``_can_use_flash_attention``...); otherwise the answer is PyTorch's on a
build without CUDA, False, and with ``debug=True`` no reasons are given (PyTorch gives
none there either).
"""

from __future__ import annotations

import flambeau
from flambeau.backends import _cuda_plugin

__all__ = [
    "SDPAParams",
    "can_use_cudnn_attention",
    "can_use_efficient_attention",
    "can_use_flash_attention",
    "is_ck_sdpa_available",
    "is_flash_attention_available",
]


def _as_bool(value, what: str) -> bool:
    """A bool argument as PyTorch's bindings take it: None is False, anything with
    ``__bool__`` (numbers, one-element tensors) its truth, anything else a TypeError."""
    if value is None:
        return False
    if not hasattr(type(value), "__bool__"):
        raise TypeError(f"{what} must be bool, not {type(value).__name__}")
    return bool(value)


def _as_float(value, what: str) -> float:
    if isinstance(value, (str, bytes)) or not (
        hasattr(type(value), "__float__") or hasattr(type(value), "__index__")
    ):
        raise TypeError(f"{what} must be float, not {type(value).__name__}")
    return float(value)


def _as_tensor(value, what: str, optional: bool = False):
    if (value is None and optional) or isinstance(value, flambeau.Tensor):
        return value
    raise TypeError(
        f"{what} must be {'Tensor or None' if optional else 'Tensor'}, not {type(value).__name__}"
    )


class SDPAParams:
    """The inputs of one scaled_dot_product_attention call, as the ``can_use_*``
    functions take them: ``SDPAParams(query, key, value, attn_mask, dropout, is_causal,
    enable_gqa)``, all seven positional, as PyTorch's. The fields are read-only.

    >>> from flambeau.backends.cuda import SDPAParams
    >>> q = flambeau.ones(1, 2, 3, 4)
    >>> params = SDPAParams(q, q, q, None, 0, True, False)
    >>> params.dropout, params.is_causal, params.attn_mask is None, params.query is q
    (0.0, True, True, True)
    """

    __slots__ = ("_query", "_key", "_value", "_attn_mask", "_dropout", "_is_causal", "_enable_gqa")

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa, /):
        self._query = _as_tensor(query, "SDPAParams(): argument 'query' (position 1)")
        self._key = _as_tensor(key, "SDPAParams(): argument 'key' (position 2)")
        self._value = _as_tensor(value, "SDPAParams(): argument 'value' (position 3)")
        self._attn_mask = _as_tensor(
            attn_mask, "SDPAParams(): argument 'attn_mask' (position 4)", optional=True
        )
        self._dropout = _as_float(dropout, "SDPAParams(): argument 'dropout' (position 5)")
        self._is_causal = _as_bool(is_causal, "SDPAParams(): argument 'is_causal' (position 6)")
        self._enable_gqa = _as_bool(enable_gqa, "SDPAParams(): argument 'enable_gqa' (position 7)")

    query = property(lambda self: self._query, doc="The query tensor.")
    key = property(lambda self: self._key, doc="The key tensor.")
    value = property(lambda self: self._value, doc="The value tensor.")
    attn_mask = property(lambda self: self._attn_mask, doc="The attention mask, or None.")
    dropout = property(lambda self: self._dropout, doc="The dropout probability (a float).")
    is_causal = property(lambda self: self._is_causal, doc="Whether attention is causal.")
    enable_gqa = property(
        lambda self: self._enable_gqa, doc="Whether grouped-query attention is enabled."
    )


def _ask_plugin(name: str, params, debug, caller: str) -> bool:
    if not isinstance(params, SDPAParams):
        raise TypeError(
            f"{caller}(): argument 'params' must be SDPAParams, not {type(params).__name__}"
        )
    debug = _as_bool(debug, f"{caller}(): argument 'debug'")
    answer = _cuda_plugin.hook(name)
    return bool(answer(params, debug)) if answer is not None else False


def can_use_flash_attention(params: SDPAParams, debug: bool = False) -> bool:
    """Whether the FlashAttention CUDA kernel can run ``params``; with ``debug=True`` the
    reasons it cannot are warned. False without a CUDA plugin that answers.

    >>> from flambeau.backends.cuda import SDPAParams, can_use_flash_attention
    >>> q = flambeau.ones(1, 2, 3, 4)
    >>> can_use_flash_attention(SDPAParams(q, q, q, None, 0.0, False, False), debug=True)
    False
    """
    return _ask_plugin("_can_use_flash_attention", params, debug, "can_use_flash_attention")


def can_use_efficient_attention(params: SDPAParams, debug: bool = False) -> bool:
    """Whether the memory-efficient attention CUDA kernel can run ``params``; with
    ``debug=True`` the reasons it cannot are warned. False without a CUDA plugin that
    answers.

    >>> from flambeau.backends.cuda import SDPAParams, can_use_efficient_attention
    >>> q = flambeau.ones(1, 2, 3, 4)
    >>> can_use_efficient_attention(SDPAParams(q, q, q, None, 0.0, False, False))
    False
    """
    return _ask_plugin(
        "_can_use_mem_efficient_attention", params, debug, "can_use_efficient_attention"
    )


def can_use_cudnn_attention(params: SDPAParams, debug: bool = False) -> bool:
    """Whether cuDNN's attention kernel can run ``params``; with ``debug=True`` the
    reasons it cannot are warned. False without a CUDA plugin that answers.

    >>> from flambeau.backends.cuda import SDPAParams, can_use_cudnn_attention
    >>> q = flambeau.ones(1, 2, 3, 4)
    >>> can_use_cudnn_attention(SDPAParams(q, q, q, None, 0.0, False, False))
    False
    """
    return _ask_plugin("_can_use_cudnn_attention", params, debug, "can_use_cudnn_attention")


def is_flash_attention_available() -> bool:
    """Whether a FlashAttention kernel was built: False without a CUDA plugin that says so.

    >>> flambeau.backends.cuda.is_flash_attention_available()
    False
    """
    answer = _cuda_plugin.hook("_is_flash_attention_available")
    return bool(answer()) if answer is not None else False


def is_ck_sdpa_available() -> bool:
    """Whether AMD's composable_kernel may run scaled_dot_product_attention (ROCm only):
    False without a plugin that says so.

    >>> flambeau.backends.cuda.is_ck_sdpa_available()
    False
    """
    answer = _cuda_plugin.hook("_is_ck_sdpa_available")
    return bool(answer()) if answer is not None else False
