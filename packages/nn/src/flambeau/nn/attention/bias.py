"""flambeau.nn.attention.bias: causal masks to pass as scaled_dot_product_attention's
``attn_mask`` without building them (torch.nn.attention.bias).

A ``CausalBias`` takes over the call (``__torch_function__``): upper-left causal attention,
or lower-right with equal sequence lengths, is ``is_causal=True``; lower-right with
different lengths runs with the mask made explicit, as PyTorch does on the CPU (its
fused CUDA kernels, which take the variant directly, flambeau does not have).
"""

from __future__ import annotations

from enum import IntEnum, auto
from warnings import warn

import flambeau

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """Where a causal mask's triangle is aligned when the query and key/value sequence
    lengths differ. ``UPPER_LEFT``: query i attends keys 0..i (``is_causal=True``),
    ``tril(ones(L, S))``. ``LOWER_RIGHT``: the last query attends every key,
    ``tril(ones(L, S), diagonal=S - L)``. For L == S they are the same.

    >>> from flambeau.nn.attention.bias import CausalVariant
    >>> list(CausalVariant)
    [<CausalVariant.UPPER_LEFT: 1>, <CausalVariant.LOWER_RIGHT: 2>]
    """

    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(flambeau.Tensor):
    """A causal attention mask of one :class:`CausalVariant` for queries of length
    ``seq_len_q`` and keys of length ``seq_len_kv``, given to scaled_dot_product_attention
    as ``attn_mask``; made by :func:`causal_upper_left` and :func:`causal_lower_right`.
    Its repr is the boolean mask it stands for (True: may attend). As in PyTorch, the
    tensor's own data (shape ``(variant, seq_len_q, seq_len_kv)``) is uninitialized.
    LOWER_RIGHT with ``seq_len_q > seq_len_kv`` warns: its first rows attend nothing,
    which gives NaN.

    >>> import flambeau.nn.functional as F
    >>> from flambeau.nn.attention.bias import causal_lower_right
    >>> bias = causal_lower_right(2, 3)
    >>> bias
    tensor([[ True,  True, False],
            [ True,  True,  True]])
    >>> q, kv = flambeau.ones(1, 1, 2, 4), flambeau.ones(1, 1, 3, 4)
    >>> F.scaled_dot_product_attention(q, kv, kv, bias).shape
    flambeau.Size([1, 1, 2, 4])
    """

    __slots__ = ()  # flambeau re-classes a core tensor: no layout of its own

    def __new__(cls, variant: CausalVariant, seq_len_q: int, seq_len_kv: int):
        return flambeau.empty(variant, seq_len_q, seq_len_kv).as_subclass(cls)

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warn(
                "Lower right causal bias will produce NaNs in the output when seq_len_q > "
                "seq_len_kv!",
                stacklevel=2,
            )

    def _materialize(self, device=None) -> flambeau.Tensor:
        """The mask as a bool tensor (True: may attend), on ``device`` (the CPU if None)."""
        if device is None:
            device = flambeau.device("cpu")
        ones = flambeau.ones(self.seq_len_q, self.seq_len_kv, device=device, dtype=flambeau.bool)
        if self.variant == CausalVariant.UPPER_LEFT:
            return flambeau.tril(ones)
        if self.variant == CausalVariant.LOWER_RIGHT:
            return flambeau.tril(ones, diagonal=self.seq_len_kv - self.seq_len_q)
        return None

    @staticmethod
    def _dispatch(query, key, value, attn_mask: CausalBias, dropout_p: float = 0.0,
                  is_causal: bool = False, scale=None, enable_gqa: bool = False):  # fmt: skip
        """scaled_dot_product_attention with ``attn_mask`` a CausalBias."""
        import flambeau.nn.functional as F

        from . import SDPAParams, _raise_kernel_warnings

        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if (
            attn_mask.seq_len_q == attn_mask.seq_len_kv
            or attn_mask.variant == CausalVariant.UPPER_LEFT
        ):
            return F.scaled_dot_product_attention(
                query, key, value, attn_mask=None, dropout_p=dropout_p, is_causal=True,
                scale=scale, enable_gqa=enable_gqa,
            )  # fmt: skip
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            _validate_sdpa_input(query, key, value)
            # flambeau has one attention operator: the fused kernels PyTorch would try first
            # are only asked about, for the warnings WARN_FOR_UNFUSED_KERNELS asks for.
            _raise_kernel_warnings(
                SDPAParams(query, key, value, None, dropout_p, is_causal, enable_gqa)
            )
            return F.scaled_dot_product_attention(
                query, key, value, attn_mask=attn_mask._materialize(query.device),
                dropout_p=dropout_p, is_causal=False, scale=scale, enable_gqa=enable_gqa,
            )  # fmt: skip
        raise ValueError(
            f"CausalBias.variant must be a CausalVariant type, but found: {attn_mask.variant}"
        )

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """flambeau.nn.functional.scaled_dot_product_attention with a CausalBias runs
        :meth:`_dispatch`; any other function treats it as the tensor it is."""
        import flambeau.nn.functional as F

        if kwargs is None:
            kwargs = {}
        if func is F.scaled_dot_product_attention:
            return cls._dispatch(*args, **kwargs)
        return super().__torch_function__(func, types, args, kwargs)

    def __repr__(self) -> str:
        return repr(self._materialize())

    __str__ = __repr__  # print() shows the mask too, not the placeholder data


def _validate_sdpa_input(query, key, value) -> None:
    """PyTorch's checks of the inputs before a lower-right bias is applied (ValueError)."""
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise ValueError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype}, key.dtype: {key.dtype}, and value.dtype: {value.dtype} instead."
        )
    if query.device != key.device or query.device != value.device:
        raise ValueError(
            "Expected query, key, and value to have the same device type, but got "
            f"query.device: {query.device}, key.device: {key.device}, and value.device: "
            f"{value.device} instead."
        )
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead."
        )


def causal_upper_left(*size) -> CausalBias:
    """The upper-left causal bias of ``size`` (seq_len_q, seq_len_kv): query i attends keys
    0..i, as ``is_causal=True`` does; the mask ``tril(ones(size, dtype=bool))``.

    >>> from flambeau.nn.attention.bias import causal_upper_left
    >>> causal_upper_left(3, 4)
    tensor([[ True, False, False, False],
            [ True,  True, False, False],
            [ True,  True,  True, False]])
    """
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size) -> CausalBias:
    """The lower-right causal bias of ``size`` (seq_len_q, seq_len_kv): the last query
    attends every key; the mask ``tril(ones(size, dtype=bool), diagonal=size[1] - size[0])``.

    >>> from flambeau.nn.attention.bias import causal_lower_right
    >>> causal_lower_right(3, 4)
    tensor([[ True,  True, False, False],
            [ True,  True,  True, False],
            [ True,  True,  True,  True]])
    """
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
