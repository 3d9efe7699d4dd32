"""MultiheadAttention and the Transformer encoder/decoder stacks."""

from __future__ import annotations

import copy

import flambeau

from .. import _functional_rnn as FR
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .container import ModuleList
from .linear import Linear, NonDynamicallyQuantizableLinear
from .module import Module

__all__ = [
    "MultiheadAttention",
    "TransformerEncoderLayer",
    "TransformerEncoder",
    "TransformerDecoderLayer",
    "TransformerDecoder",
    "Transformer",
]


# LayerNorm and Dropout modules live in other files of this package; until they land the
# stacks use these small stand-ins with the same parameter names and behaviour.
try:  # pragma: no cover - depends on what else is on the branch
    from .normalization import LayerNorm as _LayerNorm
except ImportError:

    class _LayerNorm(Module):
        """Layer normalisation over the last dim, with affine weight and bias."""

        def __init__(self, normalized_shape: int, eps: float = 1e-5, bias: bool = True,
                     device=None, dtype=None):  # fmt: skip
            super().__init__()
            self.normalized_shape = (normalized_shape,)
            self.eps = eps
            self.weight = Parameter(flambeau.ones(normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(flambeau.zeros(normalized_shape, dtype=dtype,
                                                     device=device))  # fmt: skip
            else:
                self.register_parameter("bias", None)

        def forward(self, input):
            return flambeau.layer_norm(input, list(self.normalized_shape), self.weight, self.bias,
                                       self.eps)  # fmt: skip

        def extra_repr(self) -> str:
            return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine=True"


try:  # pragma: no cover
    from .dropout import Dropout as _Dropout
except ImportError:

    class _Dropout(Module):
        """Zeroes elements with probability p in training mode, scaling the rest by 1/(1-p)."""

        def __init__(self, p: float = 0.5, inplace: bool = False):
            super().__init__()
            if not 0 <= p <= 1:
                raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
            self.p = p
            self.inplace = inplace

        def forward(self, input):
            if not self.training or self.p == 0:
                return input
            return flambeau.dropout(input, self.p, True)

        def extra_repr(self) -> str:
            return f"p={self.p}, inplace={self.inplace}"


class MultiheadAttention(Module):
    """Attention over num_heads projected subspaces (see F.multi_head_attention_forward).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> mha = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
    >>> x = flambeau.randn(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    (flambeau.Size([3, 5, 8]), flambeau.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):  # fmt: skip
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"MultiheadAttention: embed_dim ({embed_dim}) and num_heads ({num_heads}) must be "
                f"positive"
            )
        if embed_dim % num_heads:
            raise ValueError(
                f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by num_heads "
                f"({num_heads})"
            )
        kw = {"dtype": dtype, "device": device}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(flambeau.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(flambeau.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(flambeau.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(flambeau.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(flambeau.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(flambeau.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(flambeau.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True,
                is_causal: bool = False):  # fmt: skip
        if query.dim() not in (2, 3):
            raise RuntimeError(
                f"MultiheadAttention: expected query of shape (L, E), (L, N, E) or (N, L, E) with "
                f"batch_first, got {tuple(query.shape)}"
            )
        if query.shape[-1] != self.embed_dim:
            raise RuntimeError(
                f"MultiheadAttention: expected query with embed_dim {self.embed_dim} in its last "
                f"dim, got shape {tuple(query.shape)}"
            )
        batched = query.dim() == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        out, weights = FR.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )  # fmt: skip
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        return out, weights


def _get_activation_fn(activation: str):
    """F.relu or F.gelu for the names PyTorch's layers accept (stored as PyTorch stores them,
    so a saved layer refers to the same function)."""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _activation(activation):
    return _get_activation_fn(activation) if isinstance(activation, str) else activation


def _relu_or_gelu_code(activation) -> int:
    """1 for ReLU, 2 for GELU, 0 otherwise: PyTorch's TransformerEncoderLayer attribute."""
    from .activation import GELU, ReLU

    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual and LayerNorm.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16,
    ...                                    batch_first=True)
    >>> layer(flambeau.randn(2, 6, 8)).shape
    flambeau.Size([2, 6, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        kw = {"dtype": dtype, "device": device}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)  # fmt: skip
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = _Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = _Dropout(dropout)
        self.dropout2 = _Dropout(dropout)
        activation = _activation(activation)
        self.activation_relu_or_gelu = _relu_or_gelu_code(activation)
        self.activation = activation

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]  # fmt: skip
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder memory, then a feed-forward block.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> memory, tgt = flambeau.randn(6, 2, 8), flambeau.randn(5, 2, 8)
    >>> layer(tgt, memory).shape
    flambeau.Size([5, 2, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):  # fmt: skip
        super().__init__()
        kw = {"dtype": dtype, "device": device}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)  # fmt: skip
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **kw)  # fmt: skip
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = _Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = _Dropout(dropout)
        self.dropout2 = _Dropout(dropout)
        self.dropout3 = _Dropout(dropout)
        self.activation = _activation(activation)

    def __setstate__(self, state) -> None:
        state.setdefault("activation", F.relu)
        super().__setstate__(state)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]  # fmt: skip
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False,
                                is_causal=is_causal)[0]  # fmt: skip
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False):  # fmt: skip
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)  # fmt: skip
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))  # fmt: skip
            x = self.norm3(x + self._ff_block(x))
        return x


def _get_clones(module, n: int):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class TransformerEncoder(Module):
    """num_layers copies of an encoder layer, then an optional final norm.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> encoder = nn.TransformerEncoder(layer, num_layers=2)
    >>> encoder(flambeau.randn(6, 2, 8)).shape
    flambeau.Size([6, 2, 8])
    """

    def __init__(self, encoder_layer, num_layers: int, norm=None, enable_nested_tensor=True,
                 mask_check=True):  # fmt: skip
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                        is_causal=bool(is_causal))  # fmt: skip
        return self.norm(out) if self.norm is not None else out


class TransformerDecoder(Module):
    """num_layers copies of a decoder layer, then an optional final norm.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> decoder = nn.TransformerDecoder(layer, num_layers=2)
    >>> memory, tgt = flambeau.randn(6, 2, 8), flambeau.randn(5, 2, 8)
    >>> decoder(tgt, memory).shape
    flambeau.Size([5, 2, 8])
    """

    def __init__(self, decoder_layer, num_layers: int, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None,
                memory_is_causal: bool = False):  # fmt: skip
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=bool(tgt_is_causal),
                        memory_is_causal=memory_is_causal)  # fmt: skip
        return self.norm(out) if self.norm is not None else out


class Transformer(Module):
    """An encoder-decoder transformer (Vaswani et al. 2017).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
    ...                        dim_feedforward=16)
    >>> src, tgt = flambeau.randn(6, 2, 8), flambeau.randn(5, 2, 8)
    >>> mask = nn.Transformer.generate_square_subsequent_mask(5)
    >>> model(src, tgt, tgt_mask=mask).shape
    flambeau.Size([5, 2, 8])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", custom_encoder=None, custom_decoder=None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        kw = {"dtype": dtype, "device": device}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)  # fmt: skip
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            enc_layer = TransformerEncoderLayer(*layer_args, **kw)
            enc_norm = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(enc_layer, num_encoder_layers, enc_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            dec_layer = TransformerDecoderLayer(*layer_args, **kw)
            dec_norm = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(dec_layer, num_decoder_layers, dec_norm)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False):  # fmt: skip
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError(
                f"Transformer: the batch number of src {tuple(src.shape)} and tgt "
                f"{tuple(tgt.shape)} must be equal"
            )
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(
                f"Transformer: the feature number of src {tuple(src.shape)} and tgt "
                f"{tuple(tgt.shape)} must be equal to d_model ({self.d_model})"
            )
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)  # fmt: skip
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)  # fmt: skip

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
        """A float (sz, sz) mask: -inf above the diagonal, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, device, dtype)


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None):
    """A float (sz, sz) mask: -inf above the diagonal, 0 elsewhere."""
    dtype = dtype or flambeau.float32
    ones = flambeau.ones((sz, sz), dtype=flambeau.bool, device=device)
    zeros = flambeau.zeros((sz, sz), dtype=dtype, device=device)
    return zeros.masked_fill(ones.triu(1), float("-inf"))
